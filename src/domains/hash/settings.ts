/**
 * Hashing settings: the KDF pool's size and the ceilings on each algorithm's cost (docs/hash.md).
 * Declared once here and named by the descriptor (`settings` in index.ts); src/config.ts composes them under
 * `hash.*` (env names, defaults, the README table and `serve --help` come from these declarations).
 * Imports nothing of the domain: config reads it, and config sits below the domains.
 */
import { integer, zeroOrAtLeast } from '../../lib/parsers.ts'
import { setting } from '../../lib/settings.ts'

const MiB = 2 ** 20

export const hashSettings = {
  workers: setting(integer(0, 256), { default: 0, shown: '0 = cores', env: 'ALMANAC_HASH_WORKERS', doc: 'KDF worker threads.' }),
  queueSize: setting(integer(1, 100000), {
    default: 64,
    env: 'ALMANAC_HASH_QUEUE',
    doc: 'KDF jobs allowed to wait for a worker (503 beyond).',
  }),
  bcryptMaxRounds: setting(integer(4, 31), {
    default: 15,
    env: 'ALMANAC_HASH_BCRYPT_MAX_ROUNDS',
    doc: 'Ceiling on bcrypt rounds (422 naming it).',
  }),
  scryptMaxMemoryBytes: setting(integer(1024, 2 ** 40), {
    default: 128 * MiB * 8,
    shown: '1 GiB',
    env: 'ALMANAC_HASH_SCRYPT_MAX_MEMORY',
    doc: "Ceiling on scrypt's memory, 128·r·(n + p) bytes (422 naming it).",
  }),
  scryptMaxParallelism: setting(integer(1, 2 ** 30 - 1), {
    default: 16,
    env: 'ALMANAC_HASH_SCRYPT_MAX_PARALLELISM',
    doc: "Ceiling on scrypt's p: each lane repeats the whole n·r work, so p multiplies the time.",
  }),
  argon2MaxMemoryKiB: setting(integer(8, 2 ** 32 - 1), {
    default: 262144,
    shown: '262144 KiB',
    env: 'ALMANAC_HASH_ARGON2_MAX_MEMORY',
    doc: "Ceiling on argon2id's memory_cost, KiB.",
  }),
  argon2MaxTimeCost: setting(integer(1, 2 ** 32 - 1), {
    default: 10,
    env: 'ALMANAC_HASH_ARGON2_MAX_TIME',
    doc: "Ceiling on argon2id's time_cost.",
  }),
  argon2MaxParallelism: setting(integer(1, 255), {
    default: 8,
    env: 'ALMANAC_HASH_ARGON2_MAX_PARALLELISM',
    doc: "Ceiling on argon2id's parallelism.",
  }),
  // n·r·p: the default scrypt (16384·8·1) is 2^17 and takes ~50 ms; 2^23 is ~3 s of one core.
  scryptMaxWork: setting(integer(1, 2 ** 40), {
    default: 2 ** 23,
    shown: '2^23',
    env: 'ALMANAC_HASH_SCRYPT_MAX_WORK',
    doc: "Ceiling on scrypt's n·r·p, which the time grows with (422 naming it).",
  }),
  // time_cost · memory_cost (KiB): the default argon2id is 196,608; 2^20 is ~1.5 s of one core.
  argon2MaxWork: setting(integer(1, 2 ** 40), {
    default: 2 ** 20,
    shown: '2^20',
    env: 'ALMANAC_HASH_ARGON2_MAX_WORK',
    doc: "Ceiling on argon2id's time_cost·memory_cost; parallelism splits memory into lanes, adding no work (422 naming it).",
  }),
  jobsPerCaller: setting(integer(1, 100000), {
    default: 4,
    env: 'ALMANAC_HASH_JOBS_PER_CALLER',
    doc: 'KDF jobs one caller may have running or waiting (503 beyond, for that caller).',
  }),
  memoryBudgetBytes: setting(zeroOrAtLeast(2 ** 20, 2 ** 50), {
    default: 0,
    shown: '0 = ¼ of min(RAM, cgroup limit) ÷ `workers`',
    env: 'ALMANAC_HASH_MEMORY_BUDGET',
    doc:
      'Bytes all running KDF jobs may allocate (scrypt 128·r·(n+2+p), argon2id memory_cost KiB); one caller may hold half. Beyond it ' +
      'jobs wait in the queue (503 when full); a job over half is a 422 naming it.',
  }),
}
