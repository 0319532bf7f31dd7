/**
 * The hashing service: digests computed here (cheap, deterministic), password hashes checked against the
 * SPEC ranges and this server's ceilings, then handed to the worker pool. No HTTP here: failures are
 * AlmanacErrors naming the request field (and, for a ceiling, the setting an operator can raise).
 */
import { createHash } from 'node:crypto'
import type { Config } from '../../config.ts'
import { AlmanacError, invalidFields, tooLarge, type FieldError } from '../../lib/errors.ts'
import { callerShare } from './budget.ts'
import { scryptMemory, type Argon2Params, type KdfJob, type ScryptParams } from './kdf.ts'
import type { KdfPool } from './pool.ts'

/** SPEC Limits: hash input 256 KB, counted as bytes of the UTF-8 encoding. */
export const MAX_INPUT_BYTES = 256 * 1024

export const DIGESTS = ['md5', 'sha1', 'sha256', 'sha512'] as const
export type DigestAlgorithm = (typeof DIGESTS)[number]
export type KdfAlgorithm = KdfJob['algorithm']

export const DEFAULTS = {
  bcrypt: { rounds: 12 },
  scrypt: { n: 16384, r: 8, p: 1 },
  argon2id: { time_cost: 3, memory_cost: 65536, parallelism: 4 },
} as const

/** A KDF's result: `params` holds the parameters actually used, the job's own. */
type KdfResult<J extends KdfJob> = { algorithm: J['algorithm']; hash: string; params: J['params'] }

/** The canonical result, each KDF's `params` typed by its algorithm (the presenter renames scrypt's). */
export type HashResult =
  | { algorithm: DigestAlgorithm; hash: string; params?: undefined }
  | { [A in KdfAlgorithm]: KdfResult<Extract<KdfJob, { algorithm: A }>> }[KdfAlgorithm]

/** scrypt parameters as either form spells them (SPEC Hashing rule 2). */
export interface ScryptRequest {
  n?: number
  r?: number
  p?: number
  cost_factor?: number
  block_size?: number
  parallelism?: number
}

/** The `hash` settings, with `memoryBudgetBytes` resolved (never 0: see budget.ts `memoryBudget`). */
type HashCeilings = Config['hash']

/**
 * The memory ceiling one job actually meets: the configured one, or a caller's share of the hashing memory
 * budget (half of it) when that is smaller, since a job larger than the share could never start.
 */
export function memoryCeilings(limits: HashCeilings) {
  const share = callerShare(limits.memoryBudgetBytes)
  return {
    budgetBytes: limits.memoryBudgetBytes,
    callerShareBytes: share,
    scryptBytes: Math.min(limits.scryptMaxMemoryBytes, share),
    argon2KiB: Math.min(limits.argon2MaxMemoryKiB, Math.floor(share / 1024)),
  }
}

const BUDGET = { setting: 'hash.memoryBudgetBytes', env: 'ALMANAC_HASH_MEMORY_BUDGET' }
const shareOf = (budget: number) => `half of this server's hashing memory budget hash.memoryBudgetBytes = ${budget} bytes`

interface Ceiling {
  field: string
  setting: string
  env: string
  value: number
  message: string
}

/** A request over an operator ceiling: 422 naming each field and the setting that caps it. */
function overCeilings(algorithm: string, over: Ceiling[]): AlmanacError {
  const detail = `${algorithm}: ${over.map((c) => c.message).join('; ')}.`
  return new AlmanacError('invalid', detail, {
    errors: over.map((c) => ({ in: 'body', field: c.field, message: c.message })),
    extra: { ceilings: over.map(({ setting, env, value, field }) => ({ field, setting, env, value })) },
  })
}

/** A password hash of nothing protects nothing, and bcrypt refuses it outright: a 422 naming `input`. */
function checkPassword(input: string) {
  checkInput(input)
  if (input === '') throw invalidFields([{ in: 'body', field: 'input', message: 'must not be empty for a password hash' }])
}

/** Refuses an input over the SPEC limit before any work is done. */
export function checkInput(input: string) {
  const bytes = Buffer.byteLength(input, 'utf8')
  if (bytes > MAX_INPUT_BYTES) {
    const message = `is ${bytes} bytes of UTF-8; the limit is ${MAX_INPUT_BYTES} bytes (256 KB)`
    throw tooLarge(`input ${message}.`, [{ in: 'body', field: 'input', message }])
  }
}

export function digest(algorithm: DigestAlgorithm, input: string): HashResult {
  checkInput(input)
  return { algorithm, hash: createHash(algorithm).update(input, 'utf8').digest('hex') }
}

/** Reads one scrypt parameter given under either name; both names with different values is an error. */
function alias(
  body: ScryptRequest,
  bare: 'n' | 'r' | 'p',
  enveloped: 'cost_factor' | 'block_size' | 'parallelism',
  errors: FieldError[],
): { value: number; field: string } {
  const a = body[bare]
  const b = body[enveloped]
  if (a !== undefined && b !== undefined && a !== b) {
    const message = `${bare} and ${enveloped} name the same parameter but differ (${a} and ${b}); send one`
    errors.push({ in: 'body', field: bare, message }, { in: 'body', field: enveloped, message })
  }
  if (a !== undefined) return { value: a, field: bare }
  if (b !== undefined) return { value: b, field: enveloped }
  return { value: DEFAULTS.scrypt[bare], field: bare }
}

export function scryptParams(body: ScryptRequest, limits: HashCeilings): ScryptParams {
  const errors: FieldError[] = []
  const n = alias(body, 'n', 'cost_factor', errors)
  const r = alias(body, 'r', 'block_size', errors)
  const p = alias(body, 'p', 'parallelism', errors)
  if (!Number.isInteger(Math.log2(n.value)) || n.value < 2)
    errors.push({ in: 'body', field: n.field, message: `must be a power of two greater than 1, got ${n.value}` })
  // RFC 7914 §2: N < 2^(128·r/8) and r·p < 2^30.
  else if (Math.log2(n.value) >= 16 * r.value)
    errors.push({ in: 'body', field: n.field, message: `must be less than 2^(16·${r.field}) = 2^${16 * r.value} (RFC 7914)` })
  if (r.value * p.value >= 2 ** 30)
    errors.push({ in: 'body', field: p.field, message: `${r.field} × ${p.field} must be less than 2^30 (RFC 7914)` })
  if (errors.length) throw invalidFields(errors)

  const over: Ceiling[] = []
  const memory = scryptMemory({ n: n.value, r: r.value, p: p.value })
  const ceilings = memoryCeilings(limits)
  if (memory > ceilings.scryptBytes) {
    const cost = `128 × ${r.field} × (${n.field} + 2 + ${p.field}) = ${memory} bytes`
    over.push(
      ceilings.scryptBytes < limits.scryptMaxMemoryBytes
        ? {
            field: n.field,
            ...BUDGET,
            value: ceilings.scryptBytes,
            message: `${cost} is over the ${ceilings.scryptBytes} bytes one caller may hold, ${shareOf(ceilings.budgetBytes)}`,
          }
        : {
            field: n.field,
            setting: 'hash.scryptMaxMemoryBytes',
            env: 'ALMANAC_HASH_SCRYPT_MAX_MEMORY',
            value: limits.scryptMaxMemoryBytes,
            message: `${cost} is over this server's ceiling hash.scryptMaxMemoryBytes = ${limits.scryptMaxMemoryBytes}`,
          },
    )
  }
  const work = n.value * r.value * p.value
  if (work > limits.scryptMaxWork) {
    over.push({
      field: n.field,
      setting: 'hash.scryptMaxWork',
      env: 'ALMANAC_HASH_SCRYPT_MAX_WORK',
      value: limits.scryptMaxWork,
      message:
        `${n.field} × ${r.field} × ${p.field} = ${work} is over this server's work ceiling hash.scryptMaxWork ` +
        `= ${limits.scryptMaxWork}`,
    })
  }
  if (p.value > limits.scryptMaxParallelism) {
    over.push({
      field: p.field,
      setting: 'hash.scryptMaxParallelism',
      env: 'ALMANAC_HASH_SCRYPT_MAX_PARALLELISM',
      value: limits.scryptMaxParallelism,
      message: `${p.field} ${p.value} is over this server's ceiling hash.scryptMaxParallelism = ${limits.scryptMaxParallelism}`,
    })
  }
  if (over.length) throw overCeilings('scrypt', over)
  return { n: n.value, r: r.value, p: p.value }
}

export function bcryptParams(body: { rounds?: number }, limits: HashCeilings) {
  const rounds = body.rounds ?? DEFAULTS.bcrypt.rounds
  if (rounds > limits.bcryptMaxRounds) {
    throw overCeilings('bcrypt', [
      {
        field: 'rounds',
        setting: 'hash.bcryptMaxRounds',
        env: 'ALMANAC_HASH_BCRYPT_MAX_ROUNDS',
        value: limits.bcryptMaxRounds,
        message: `rounds ${rounds} is over this server's ceiling hash.bcryptMaxRounds = ${limits.bcryptMaxRounds}`,
      },
    ])
  }
  return { rounds }
}

export function argon2Params(body: Partial<Argon2Params>, limits: HashCeilings): Argon2Params {
  const params: Argon2Params = {
    time_cost: body.time_cost ?? DEFAULTS.argon2id.time_cost,
    memory_cost: body.memory_cost ?? DEFAULTS.argon2id.memory_cost,
    parallelism: body.parallelism ?? DEFAULTS.argon2id.parallelism,
  }
  // RFC 9106 §3.1: at least 8 KiB of memory per lane.
  if (params.memory_cost < 8 * params.parallelism) {
    throw invalidFields([
      {
        in: 'body',
        field: 'memory_cost',
        message: `must be at least 8 × parallelism = ${8 * params.parallelism} KiB (RFC 9106), got ${params.memory_cost}`,
      },
    ])
  }
  const over: Ceiling[] = []
  const cap = (field: keyof Argon2Params, setting: string, env: string, value: number, unit = '') => {
    if (params[field] > value)
      over.push({
        field,
        setting,
        env,
        value,
        message: `${field} ${params[field]}${unit} is over this server's ceiling ${setting} = ${value}${unit}`,
      })
  }
  cap('time_cost', 'hash.argon2MaxTimeCost', 'ALMANAC_HASH_ARGON2_MAX_TIME', limits.argon2MaxTimeCost)
  const ceilings = memoryCeilings(limits)
  if (ceilings.argon2KiB < limits.argon2MaxMemoryKiB) {
    if (params.memory_cost > ceilings.argon2KiB)
      over.push({
        field: 'memory_cost',
        ...BUDGET,
        value: ceilings.argon2KiB,
        message:
          `memory_cost ${params.memory_cost} KiB is over the ${ceilings.argon2KiB} KiB one caller may ` +
          `hold, ${shareOf(ceilings.budgetBytes)}`,
      })
  } else cap('memory_cost', 'hash.argon2MaxMemoryKiB', 'ALMANAC_HASH_ARGON2_MAX_MEMORY', limits.argon2MaxMemoryKiB, ' KiB')
  cap('parallelism', 'hash.argon2MaxParallelism', 'ALMANAC_HASH_ARGON2_MAX_PARALLELISM', limits.argon2MaxParallelism)
  const work = params.time_cost * params.memory_cost
  if (work > limits.argon2MaxWork) {
    over.push({
      field: 'time_cost',
      setting: 'hash.argon2MaxWork',
      env: 'ALMANAC_HASH_ARGON2_MAX_WORK',
      value: limits.argon2MaxWork,
      message:
        `time_cost × memory_cost = ${work} KiB-passes is over this server's work ceiling hash.argon2MaxWork ` + `= ${limits.argon2MaxWork}`,
    })
  }
  if (over.length) throw overCeilings('argon2id', over)
  return params
}

/** The password hashes take the caller's quota subject: one caller may hold only so many KDF jobs. */
export interface HashService {
  digest(algorithm: DigestAlgorithm, input: string): HashResult
  bcrypt(input: string, body: { rounds?: number }, caller: string): Promise<HashResult>
  scrypt(input: string, body: ScryptRequest, caller: string): Promise<HashResult>
  argon2id(input: string, body: Partial<Argon2Params>, caller: string): Promise<HashResult>
  /** The memory ceilings jobs meet, for the route descriptions. */
  ceilings: ReturnType<typeof memoryCeilings>
  pool: KdfPool
}

export function openHashService(limits: HashCeilings, pool: KdfPool): HashService {
  // Generic in the job, so each result keeps its algorithm's parameter type (HashResult pairs them).
  const kdf = async <J extends KdfJob>(job: J, caller: string): Promise<KdfResult<J>> => ({
    algorithm: job.algorithm,
    hash: await pool.run(job, caller),
    params: { ...job.params },
  })
  return {
    digest,
    pool,
    ceilings: memoryCeilings(limits),
    async bcrypt(input, body, caller) {
      checkPassword(input)
      return kdf({ algorithm: 'bcrypt', input, params: bcryptParams(body, limits) }, caller)
    },
    async scrypt(input, body, caller) {
      checkPassword(input)
      return kdf({ algorithm: 'scrypt', input, params: scryptParams(body, limits) }, caller)
    },
    async argon2id(input, body, caller) {
      checkPassword(input)
      return kdf({ algorithm: 'argon2id', input, params: argon2Params(body, limits) }, caller)
    },
  }
}
