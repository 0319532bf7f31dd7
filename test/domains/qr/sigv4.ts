/**
 * Checks an S3 presigned GET URL the way S3 does (AWS Signature Version 4, query-string auth, as AWS's
 * "Authenticating Requests: Using Query Parameters" describes it), written here from that description as
 * an oracle independent of Bun's signer. s3rver accepts any V4 signature, so the tests ask this instead.
 */
import { createHash, createHmac } from 'node:crypto'

const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest()
// RFC 3986 unreserved characters stay; everything else is percent-encoded.
const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** True when the URL's signature is the one `secret` makes for this host, path and query. */
export function presignedSignatureValid(link: string, secret: string): boolean {
  const url = new URL(link)
  const q = url.searchParams
  const [, date, region, service, terminator] = (q.get('X-Amz-Credential') ?? '').split('/')
  if (q.get('X-Amz-SignedHeaders') !== 'host' || terminator !== 'aws4_request') return false
  const query = [...q.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => `${encode(k)}=${encode(v)}`)
    .sort()
    .join('&')
  const canonical = ['GET', url.pathname, query, `host:${url.host}`, '', 'host', 'UNSIGNED-PAYLOAD'].join('\n')
  const scope = `${date}/${region}/${service}/aws4_request`
  const toSign = ['AWS4-HMAC-SHA256', q.get('X-Amz-Date'), scope, createHash('sha256').update(canonical).digest('hex')].join('\n')
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date!), region!), service!), 'aws4_request')
  return createHmac('sha256', key).update(toSign).digest('hex') === q.get('X-Amz-Signature')
}
