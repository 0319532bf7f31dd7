/**
 * QR settings: where images are stored (local or S3), how links are signed and how much one caller may keep (docs/qr.md).
 * Declared once here and named by the descriptor (`settings` in index.ts); src/config.ts composes them under
 * `qr.*` (env names, defaults, the README table and `serve --help` come from these declarations).
 * Imports nothing of the domain: config reads it, and config sits below the domains.
 */
import { boolean, fail, integer, origin, secret, text } from '../../lib/parsers.ts'
import { optional, setting, type Parser } from '../../lib/settings.ts'

/** `local`, `local:/absolute/path` or `s3://bucket[/prefix]`. */
const qrStore: Parser<string> = (raw, name) => {
  const s = text(raw, name)
  if (s === 'local' || /^local:\/./.test(s)) return s
  if (/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^\s]*)?$/.test(s)) return s
  return fail(name, `expected local, local:/absolute/path or s3://bucket/prefix, got ${JSON.stringify(s)}`)
}

export const qrSettings = {
  store: setting(qrStore, {
    default: 'local',
    env: 'ALMANAC_QR_STORE',
    doc: 'Where png/svg QR images go: `local` (`<state dir>/qr`), `local:/path`, or `s3://bucket/prefix`.',
  }),
  signingKey: optional(secret(32), {
    shown: 'generated, kept in `<state dir>/qr-signing-key`',
    env: 'ALMANAC_QR_SIGNING_KEY',
    doc: 'HMAC key (32+ characters) of local download links; share it between instances.',
  }),
  publicUrl: optional(origin, {
    shown: "the request's host",
    env: 'ALMANAC_PUBLIC_URL',
    doc: 'Origin of absolute QR download links (`https://api.example.com`); forwarded host/proto only from `ALMANAC_TRUSTED_PROXIES`.',
  }),
  storeMaxBytes: setting(integer(1024, 2 ** 50), {
    default: 2 ** 30,
    shown: '1 GiB',
    env: 'ALMANAC_QR_STORE_MAX_BYTES',
    doc: 'Ceiling on the bytes the local store holds; a write beyond it is a 503.',
  }),
  storeMaxBytesPerKey: optional(integer(1024, 2 ** 50), {
    shown: '1/16 of the ceiling',
    env: 'ALMANAC_QR_STORE_MAX_BYTES_PER_KEY',
    doc: 'Bytes of live png/svg images one key may hold in the QR store (local or S3) until their links expire; 429 beyond.',
    see: 'docs/qr.md',
  }),
  sweepSeconds: setting(integer(1, 86400), {
    default: 600,
    shown: '600 s',
    env: 'ALMANAC_QR_SWEEP_INTERVAL',
    doc: 'How often expired local images are deleted.',
  }),
  s3Endpoint: optional(origin, { env: 'S3_ENDPOINT', doc: "The S3 store's endpoint (Bun's built-in client)." }),
  s3PublicEndpoint: optional(origin, {
    shown: '`S3_ENDPOINT`',
    env: 'ALMANAC_QR_S3_PUBLIC_ENDPOINT',
    doc:
      "Origin clients download S3 QR images from, when the server reaches S3 at an address they cannot (compose's `http://s3:9000`): " +
      'links are presigned for it, uploads still use `S3_ENDPOINT`.',
    see: 'docs/qr.md',
  }),
  s3Region: optional(text, { env: 'S3_REGION', doc: "The S3 store's region." }),
  s3AccessKeyId: optional(text, { env: 'S3_ACCESS_KEY_ID', doc: "The S3 store's access key id." }),
  s3SecretAccessKey: optional(text, { env: 'S3_SECRET_ACCESS_KEY', doc: "The S3 store's secret access key." }),
  s3VirtualHostedStyle: setting(boolean, {
    default: false,
    env: 'S3_VIRTUAL_HOSTED_STYLE',
    doc: 'Bucket in the host name (`bucket.endpoint`) instead of the path.',
  }),
  s3TimeoutSeconds: setting(integer(1, 300), {
    default: 10,
    shown: '10 s',
    env: 'ALMANAC_QR_S3_TIMEOUT',
    doc: 'Seconds an S3 upload may take before the request is answered 503.',
  }),
}
