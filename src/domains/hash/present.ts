/**
 * Hash result (SPEC "Hash result"): both forms carry `algorithm` and `hash`; Form A KDF results add
 * `params` with the effective parameters, scrypt's under Form A's names (SPEC Hashing rule 2).
 */
import type { ResponseForm } from '../../config.ts'
import type { HashResult } from './service.ts'

const SCRYPT_ENVELOPED: Record<string, string> = { n: 'cost_factor', r: 'block_size', p: 'parallelism' }

export function enveloped(result: HashResult) {
  if (!result.params) return { algorithm: result.algorithm, hash: result.hash }
  const params =
    result.algorithm === 'scrypt'
      ? Object.fromEntries(Object.entries(result.params).map(([k, v]) => [SCRYPT_ENVELOPED[k] ?? k, v]))
      : result.params
  return { algorithm: result.algorithm, hash: result.hash, params }
}

export const bare = (result: HashResult) => ({ algorithm: result.algorithm, hash: result.hash })

export const present = (result: HashResult, form: ResponseForm) => (form === 'enveloped' ? enveloped(result) : bare(result))
