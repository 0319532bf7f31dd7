/**
 * Request body limit (`config.bodyLimit`), answered as a 413 problem in the caller's form.
 *
 * A declared `Content-Length` over the limit is refused before a byte of the body is read. A body without
 * one (chunked) is read here with a running count and refused as soon as it passes the limit, so a client
 * cannot make the server buffer more than the limit either way. `Bun.serve`'s own `maxRequestBodySize` is set
 * well above the limit (see `serverBodyCeiling`) as a last backstop: it answers with an empty 413 of its own,
 * so it must only ever see requests that lie about their size by a wide margin.
 */
import { Elysia, ParseError } from 'elysia'
import { tooLarge } from '../lib/errors.ts'

/** The transport-level ceiling handed to Bun.serve: generous, so our JSON 413 answers in all honest cases. */
export const serverBodyCeiling = (bodyLimit: number) => Math.max(bodyLimit * 16, 64 * 1024 * 1024)

const overLimit = (limit: number) => tooLarge(`The request body is over the limit of ${limit} bytes.`)

async function readCapped(request: Request, limit: number): Promise<string> {
  const reader = request.body!.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      reader.cancel().catch(() => {})
      throw overLimit(limit)
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

export const bodyLimit = (limit: number) =>
  new Elysia({ name: 'almanac:body-limit', seed: limit })
    .onRequest(({ request }) => {
      const declared = request.headers.get('content-length')
      if (declared !== null && !(Number(declared) <= limit)) throw overLimit(limit)
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      // With a Content-Length (already checked) Elysia's own parsers read the body.
      if (request.headers.has('content-length') || !request.body) return
      const text = await readCapped(request, limit)
      const type = (contentType ?? '').toLowerCase()
      if (type.includes('json')) {
        try {
          return JSON.parse(text)
        } catch (e) {
          throw new ParseError(e as Error)
        }
      }
      if (type.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text))
      return text
    })
