/**
 * GET /files/qr/<sha256>.<png|svg>?expires=<unix>&signature=<hmac>: the local store's signed links. It is
 * outside /api/v1 on purpose: whoever holds the link may fetch the image until `expires`, with no API key
 * and no quota, like a presigned S3 URL. A wrong or missing signature, or a time past `expires`, is a 403
 * problem; an object already swept (or never stored here) a 404.
 *
 * On a server that is one of several (keys or quotas shared in Redis), an image missing from the local
 * store may have been made by another instance, which kept it in its own folder; the answers then say so,
 * from what this server knows (a shared Redis, a local store), since the link cannot tell. Marking links
 * with the instance that made them would not help: instances are interchangeable (a container's state dir
 * is new at each start), and with each instance's own signing key the mark could not even be verified.
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
  /** This server is one of several (keys or quotas in Redis): a link it cannot serve may be another instance's. */
  several?: boolean
  /** The signing key is this instance's own (generated in its state dir), not one every instance shares. */
  ownKey?: boolean
}

const ELSEWHERE =
  'It may have been made by another instance of this service: each instance keeps its QR images in its own local store, which ' +
  'no other instance serves. ALMANAC_QR_STORE=s3://… (one bucket for every instance) makes links work on all of them.'

/** The 404 for a good link whose image is not in the folder. */
const missing = (several: boolean) =>
  several ? notFound(`This QR image is not stored on this instance. ${ELSEWHERE}`) : notFound('This QR image is no longer stored.')

/** The 403 for a signature that does not match: on one of several instances with its own key, maybe another's link. */
const badSignature = (several: boolean, ownKey: boolean) =>
  forbidden(
    'This link is not valid: its signature does not match its path and expiry.' +
      (several && ownKey
        ? ' Each instance here signs links with a key of its own (ALMANAC_QR_SIGNING_KEY is unset), so a link another instance made ' +
          `fails here. ${ELSEWHERE}`
        : ''),
  )

export function downloadRoutes({ dir, signer, now, enabled, several = false, ownKey = false }: DownloadOptions) {
  return new Elysia({ name: 'almanac:qr-download' }).get(
    `${DOWNLOAD_PREFIX}:name`,
    async ({ params, query }) => {
      const name = params.name
      const q = query as Record<string, string | undefined>
      if (!enabled || !OBJECT_NAME.test(name)) throw notFound('No such QR image.')
      const expires = /^\d{1,12}$/.test(q.expires ?? '') ? Number(q.expires) : NaN
      const signature = q.signature ?? ''
      if (!Number.isFinite(expires) || signature.length > 100 || !signer.verify(DOWNLOAD_PREFIX + name, expires, signature)) {
        throw badSignature(several, ownKey)
      }
      const left = expires - Math.floor(now() / 1000)
      if (left <= 0) throw forbidden(`This link expired at ${new Date(expires * 1000).toISOString()}.`)
      let bytes: Buffer
      try {
        bytes = await readFile(join(dir, name))
      } catch {
        throw missing(several)
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
