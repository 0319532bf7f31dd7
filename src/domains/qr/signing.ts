/**
 * Signed local download links: HMAC-SHA256 over `<path>\n<expires>` with the operator's key
 * (`ALMANAC_QR_SIGNING_KEY`) or, when unset, a random key generated once and kept in
 * `<stateDir>/qr-signing-key` (so links survive restarts and every worker process agrees).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { unavailable } from '../../lib/errors.ts'

export const KEY_FILE = 'qr-signing-key'

export interface Signer {
  sign(path: string, expires: number): string
  verify(path: string, expires: number, signature: string): boolean
}

/** The stored key, or a new one written with `wx` so concurrent workers end up reading the same file. */
function stateKey(stateDir: string): string {
  const file = join(stateDir, KEY_FILE)
  try {
    return readFileSync(file, 'utf8').trim()
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
  }
  mkdirSync(stateDir, { recursive: true, mode: 0o700 })
  try {
    writeFileSync(file, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
  }
  return readFileSync(file, 'utf8').trim()
}

/** The key is read (or made) on first use, so a server that never signs never touches the state dir. */
export function createSigner(configured: string | undefined, stateDir: string): Signer {
  let key: string | undefined = configured
  const getKey = () => {
    if (key) return key
    try {
      key = stateKey(stateDir)
    } catch (e) {
      throw unavailable(
        `The QR signing key could not be read or created in ${stateDir} (${(e as Error).message}); set ALMANAC_QR_SIGNING_KEY or make ` +
          `the state directory writable.`,
      )
    }
    if (key.length < 32) throw unavailable(`The QR signing key in ${join(stateDir, KEY_FILE)} is shorter than 32 characters.`)
    return key
  }
  const mac = (path: string, expires: number) => createHmac('sha256', getKey()).update(`${path}\n${expires}`).digest('base64url')
  return {
    sign: mac,
    verify(path, expires, signature) {
      const expected = Buffer.from(mac(path, expires))
      const given = Buffer.from(signature)
      return given.length === expected.length && timingSafeEqual(given, expected)
    },
  }
}
