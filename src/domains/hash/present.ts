/**
 * Hash result (SPEC "Hash result"): both forms carry `algorithm` and `hash`; Form A KDF results add
 * `params` with the effective parameters, scrypt's under Form A's names (SPEC Hashing rule 2).
 */
import type { Static } from 'elysia'
import type { ResponseForm } from '../../config.ts'
import type { digestSchema, kdfSchemas } from './schemas.ts'
import type { DigestAlgorithm, HashResult, KdfAlgorithm } from './service.ts'

// Typed by the schemas the routes declare: a digest's (both forms), and each KDF's in each form.
type Digest = Static<ReturnType<typeof digestSchema<DigestAlgorithm>>>
type Kdf<F extends ResponseForm> = { [A in KdfAlgorithm]: Static<ReturnType<typeof kdfSchemas<A>>[F]> }[KdfAlgorithm]

export function enveloped(result: HashResult): Digest | Kdf<'enveloped'> {
  // A case per KDF: only a narrowed result pairs the algorithm with its own parameters' type.
  switch (result.algorithm) {
    case 'scrypt': {
      const { n, r, p } = result.params
      return { algorithm: result.algorithm, hash: result.hash, params: { cost_factor: n, block_size: r, parallelism: p } }
    }
    case 'bcrypt':
      return { algorithm: result.algorithm, hash: result.hash, params: result.params }
    case 'argon2id':
      return { algorithm: result.algorithm, hash: result.hash, params: result.params }
    default:
      return { algorithm: result.algorithm, hash: result.hash }
  }
}

export const bare = (result: HashResult): Digest | Kdf<'bare'> => ({ algorithm: result.algorithm, hash: result.hash })

export const present = (result: HashResult, form: ResponseForm) => (form === 'enveloped' ? enveloped(result) : bare(result))
