/**
 * The three password hashes, as plain synchronous functions. They are slow on purpose and run only inside
 * `kdf-worker.ts`, never on the server's event-loop thread. Each call draws a fresh random salt.
 */
import { argon2Sync, randomBytes, scryptSync } from 'node:crypto'

export interface BcryptParams {
  rounds: number
}
export interface ScryptParams {
  n: number
  r: number
  p: number
}
export interface Argon2Params {
  time_cost: number
  memory_cost: number
  parallelism: number
}

export type KdfJob =
  | { algorithm: 'bcrypt'; input: string; params: BcryptParams }
  | { algorithm: 'scrypt'; input: string; params: ScryptParams }
  | { algorithm: 'argon2id'; input: string; params: Argon2Params }

/** Salt and key sizes: 16-byte salts and 32-byte keys, the usual choice for scrypt and argon2id (RFC 9106 §4). */
export const SALT_BYTES = 16
export const KEY_BYTES = 32

/** Standard base64 without `=` padding, as PHC strings use. */
export const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64').replace(/=+$/, '')

/**
 * bcrypt through Bun.password: `$2b$<rounds>$<22-char salt><31-char hash>`. Inputs over 72 bytes are first
 * reduced by Bun to their raw SHA-512 digest instead of being silently truncated (docs/hash.md).
 */
export const bcrypt = (input: string, { rounds }: BcryptParams) => Bun.password.hashSync(input, { algorithm: 'bcrypt', cost: rounds })

/** Bytes scrypt allocates: V of 128·r·(n + 2) (OpenSSL's count) and B of 128·r·p. */
export const scryptMemory = ({ n, r, p }: ScryptParams) => 128 * r * (n + 2) + 128 * r * p

/** scrypt (RFC 7914): `$scrypt$ln=<log2 n>,r=<r>,p=<p>$<salt>$<hash>`, base64 standard and unpadded. */
export function scrypt(input: string, { n, r, p }: ScryptParams): string {
  const salt = randomBytes(SALT_BYTES)
  // maxmem must cover what OpenSSL allocates, V (128·r·(n + 2)) plus B (128·r·p); it refuses anything above.
  const maxmem = scryptMemory({ n, r, p }) + 2 ** 20
  const key = scryptSync(Buffer.from(input, 'utf8'), salt, KEY_BYTES, { N: n, r, p, maxmem })
  return `$scrypt$ln=${Math.log2(n)},r=${r},p=${p}$${b64(salt)}$${b64(key)}`
}

/** argon2id (RFC 9106) in the PHC string format: `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`. */
export function argon2id(input: string, { time_cost, memory_cost, parallelism }: Argon2Params): string {
  const nonce = randomBytes(SALT_BYTES)
  const key = argon2Sync('argon2id', {
    message: Buffer.from(input, 'utf8'),
    nonce,
    parallelism,
    tagLength: KEY_BYTES,
    memory: memory_cost,
    passes: time_cost,
  })
  return `$argon2id$v=19$m=${memory_cost},t=${time_cost},p=${parallelism}$${b64(nonce)}$${b64(key)}`
}

export function runKdf(job: KdfJob): string {
  switch (job.algorithm) {
    case 'bcrypt':
      return bcrypt(job.input, job.params)
    case 'scrypt':
      return scrypt(job.input, job.params)
    case 'argon2id':
      return argon2id(job.input, job.params)
  }
}
