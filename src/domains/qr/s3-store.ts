/**
 * The S3 object store (`ALMANAC_QR_STORE=s3://bucket/prefix`), through Bun's built-in S3 client (AWS
 * Signature V4; AWS, MinIO, R2, Ceph ...). Objects are named by content hash under the prefix, and links
 * are presigned GET URLs. SigV4 presigned URLs live at most 7 days, so a longer `ttl` is cut to 7 days
 * and the answer says so. Objects do not expire by themselves: give the bucket a lifecycle rule.
 *
 * A SigV4 signature covers the host a link names, so a link presigned for an address only the server can
 * reach (a compose network's `http://s3:9000`) cannot be fixed by rewriting it afterwards: with a public
 * endpoint, links are presigned for that origin by a second client, and uploads keep the internal one.
 */
import { S3Client } from 'bun'
import { AlmanacError } from '../../lib/errors.ts'
import type { ObjectStore, StoredObject } from './store.ts'

/** SigV4: X-Amz-Expires is at most 604800 seconds. */
export const S3_MAX_TTL = 7 * 24 * 3600

const RETRY_SECONDS = 10

export interface S3StoreOptions {
  /** `s3://bucket/prefix` */
  url: string
  endpoint?: string
  /** The origin clients download from, when it is not `endpoint`; used only to presign links. */
  publicEndpoint?: string
  region?: string
  accessKeyId?: string
  secretAccessKey?: string
  virtualHostedStyle: boolean
  timeoutSeconds: number
}

export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const rest = url.slice('s3://'.length)
  const slash = rest.indexOf('/')
  const bucket = slash < 0 ? rest : rest.slice(0, slash)
  const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '')
  return { bucket, prefix }
}

/**
 * Bun's client, virtual-hosted, sends requests to the endpoint as given: the bucket must already be in
 * its host name. S3_ENDPOINT names the service (`https://s3.example.com`), so the bucket is added here.
 */
export function endpointFor(endpoint: string | undefined, bucket: string, virtualHosted: boolean): string | undefined {
  if (!endpoint || !virtualHosted) return endpoint
  const url = new URL(endpoint)
  if (!url.hostname.startsWith(bucket + '.')) url.hostname = `${bucket}.${url.hostname}`
  return url.origin
}

export function createS3Store(options: S3StoreOptions): ObjectStore {
  const { bucket, prefix } = parseS3Url(options.url)
  const clientFor = (endpoint: string | undefined) =>
    new S3Client({
      bucket,
      endpoint: endpointFor(endpoint, bucket, options.virtualHostedStyle),
      region: options.region,
      accessKeyId: options.accessKeyId,
      secretAccessKey: options.secretAccessKey,
      virtualHostedStyle: options.virtualHostedStyle,
    })
  const client = clientFor(options.endpoint)
  // Presigning is local computation: this client never sends a request.
  const signer = options.publicEndpoint ? clientFor(options.publicEndpoint) : client
  const keyOf = (name: string) => (prefix ? `${prefix}/${name}` : name)

  return {
    maxTtl: S3_MAX_TTL,
    async put(object: StoredObject) {
      let timer: ReturnType<typeof setTimeout> | undefined
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${options.timeoutSeconds} s`)), options.timeoutSeconds * 1000)
      })
      try {
        await Promise.race([client.write(keyOf(object.name), object.bytes, { type: object.contentType }), timeout])
      } catch (e) {
        throw new AlmanacError('unavailable', `The QR image store s3://${bucket} did not take the image: ${(e as Error).message}`, {
          headers: { 'Retry-After': String(RETRY_SECONDS) },
        })
      } finally {
        clearTimeout(timer)
      }
    },
    link(name, expires, _origin, now) {
      const expiresIn = Math.max(1, Math.min(S3_MAX_TTL, expires - now))
      return signer.presign(keyOf(name), { method: 'GET', expiresIn })
    },
    close() {},
  }
}
