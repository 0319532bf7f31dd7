/**
 * The operator credential of `/admin/v1` and `/console`: `Authorization: Bearer <token>` against the tokens of
 * ALMANAC_ADMIN_TOKENS, each named (the name is the actor in the audit log). It is never a customer's API
 * key: customer keys live in another store and another header, and this code never reads either.
 *
 * Compared in constant time: the presented token and every configured one are hashed (SHA-256, so lengths
 * no longer differ) and compared with `timingSafeEqual`, against all of them without stopping at a match,
 * so neither the time of a refusal nor of an acceptance says which bytes, or which token, were close.
 */
import { timingSafeEqual } from 'node:crypto'
import { AlmanacError } from '../lib/errors.ts'

export interface Operator {
  /** The credential's name (ALMANAC_ADMIN_TOKENS `name:token`). */
  name: string
}

const REALM = 'Bearer realm="almanac-admin"'

const refused = (detail: string) => new AlmanacError('unauthorized', detail, { headers: { 'WWW-Authenticate': REALM } })

/** Who presents this request's operator credential; a 401 problem otherwise. */
export function operatorAuthenticator(tokens: readonly { name: string; token: string }[]): (request: Request) => Operator {
  const known = tokens.map(({ name, token }) => ({ name, digest: Bun.SHA256.hash(token) as Uint8Array }))
  return (request) => {
    const header = request.headers.get('authorization')
    const bearer = header === null ? null : /^Bearer +(\S{1,512}) *$/i.exec(header)
    if (!bearer) throw refused('Send the operator credential as "Authorization: Bearer <token>" (a token of ALMANAC_ADMIN_TOKENS).')
    const digest = Bun.SHA256.hash(bearer[1]!) as Uint8Array
    let found: Operator | null = null
    for (const k of known) if (timingSafeEqual(k.digest, digest) && !found) found = { name: k.name }
    if (!found) throw refused('The operator credential is not valid.')
    return found
  }
}
