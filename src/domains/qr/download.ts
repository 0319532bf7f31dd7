/**
 * GET /files/qr/<sha256>.<png|svg>?expires=<unix>&signature=<hmac>: the local store's signed links. It is
 * outside /api/v1 on purpose: whoever holds the link may fetch the image until `expires`, with no API key
 * and no quota, like a presigned S3 URL. A wrong or missing signature, or a time past `expires`, is a 403
 * problem; an object already swept (or never stored here) a 404.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Elysia } from 'elysia'
import { AlmanacError, notFound } from '../../lib/errors.ts'
import { DOWNLOAD_PREFIX, OBJECT_NAME } from './local-store.ts'
import type { Signer } from './signing.ts'
import { CONTENT_TYPES } from './store.ts'

const forbidden = (detail: string) => new AlmanacError('forbidden', detail)

export interface DownloadOptions {
  dir: string
  signer: Signer
  now: () => number
  /** False when images go to S3: every local link is then a 404. */
  enabled: boolean
}

export function downloadRoutes({ dir, signer, now, enabled }: DownloadOptions) {
  return new Elysia({ name: 'almanac:qr-download' }).get(
    `${DOWNLOAD_PREFIX}:name`,
    async ({ params, query }) => {
      const name = params.name
      const q = query as Record<string, string | undefined>
      if (!enabled || !OBJECT_NAME.test(name)) throw notFound('No such QR image.')
      const expires = /^\d{1,12}$/.test(q.expires ?? '') ? Number(q.expires) : NaN
      const signature = q.signature ?? ''
      if (!Number.isFinite(expires) || signature.length > 100 || !signer.verify(DOWNLOAD_PREFIX + name, expires, signature)) {
        throw forbidden('This link is not valid: its signature does not match its path and expiry.')
      }
      const left = expires - Math.floor(now() / 1000)
      if (left <= 0) throw forbidden(`This link expired at ${new Date(expires * 1000).toISOString()}.`)
      let bytes: Buffer
      try {
        bytes = await readFile(join(dir, name))
      } catch {
        throw notFound('This QR image is no longer stored.')
      }
      const extension = name.slice(name.lastIndexOf('.') + 1)
      const svg = extension === 'svg'
      return new Response(bytes, {
        headers: {
          'content-type': CONTENT_TYPES.get(extension)!,
          // Content-addressed: the bytes behind a name never change, but the link stops working at `expires`.
          'cache-control': `public, max-age=${left}, immutable`,
          etag: `"${name.slice(0, 64)}"`,
          'x-content-type-options': 'nosniff',
          ...(svg ? { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'" } : {}),
        },
      })
    },
    { detail: { hide: true } },
  )
}
