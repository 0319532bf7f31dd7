/**
 * How much memory password hashing may hold at once. The KDFs allocate their whole working memory up front
 * (scrypt's V, argon2's blocks), so the sum over running jobs is what the pool bounds; by default it is a
 * quarter of the machine, the smaller of physical memory and the container's cgroup limit, shared by the
 * server processes. One caller may hold at most half of it, so another caller always finds room.
 */
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import type { KdfJob } from './kdf.ts'
import { scryptMemory } from './kdf.ts'

/** The share of the machine's memory that hashing gets by default. */
export const DEFAULT_MACHINE_FRACTION = 1 / 4
/** The share of the budget one caller may hold: half, so a second caller is never shut out. */
export const CALLER_FRACTION = 1 / 2

/** bcrypt's state: the P-array (18 words) and four S-boxes of 256 words, 4,168 bytes. */
export const BCRYPT_MEMORY = 4 * 18 + 4 * 4 * 256

/** Bytes a job allocates: scrypt as OpenSSL counts, argon2id its memory_cost KiB, bcrypt its fixed state. */
export function jobMemory(job: KdfJob): number {
  switch (job.algorithm) {
    case 'scrypt':
      return scryptMemory(job.params)
    case 'argon2id':
      return job.params.memory_cost * 1024
    case 'bcrypt':
      return BCRYPT_MEMORY
  }
}

const readNumber = (path: string): number | undefined => {
  try {
    const n = Number(readFileSync(path, 'utf8').trim()) // "max" (no limit) is NaN
    return Number.isFinite(n) && n > 0 ? n : undefined
  } catch {
    return undefined
  }
}

/** This process's cgroup v2 path from /proc/self/cgroup (`0::/path`), or undefined. */
function cgroupV2Path(): string | undefined {
  try {
    return readFileSync('/proc/self/cgroup', 'utf8').match(/^0::(\/.*)$/m)?.[1]
  } catch {
    return undefined
  }
}

/**
 * The memory limits of the cgroups this process sits in: cgroup v2's memory.max at the container's root and
 * along this process's path, and cgroup v1's memory.limit_in_bytes ("no limit" there is a huge number,
 * which the caller's minimum with physical memory discards).
 */
export function cgroupLimits(root = '/sys/fs/cgroup'): number[] {
  const paths = [`${root}/memory.max`, `${root}/memory/memory.limit_in_bytes`]
  const own = cgroupV2Path()
  if (own && own !== '/') {
    const parts = own.split('/').filter(Boolean)
    for (let i = parts.length; i > 0; i--) paths.push(`${root}/${parts.slice(0, i).join('/')}/memory.max`)
  }
  return paths.map(readNumber).filter((n): n is number => n !== undefined)
}

/** The memory this process may use: physical memory, or less when a cgroup limits it. */
export const machineMemory = () => Math.min(totalmem(), ...cgroupLimits())

/**
 * The hashing memory budget in bytes: the configured one, or (0, the default) a quarter of the machine's
 * memory divided between the server processes, each of which has its own pool.
 */
export function memoryBudget(configured: number, processes: number, machine = machineMemory()): number {
  if (configured > 0) return configured
  return Math.floor((machine * DEFAULT_MACHINE_FRACTION) / Math.max(1, processes))
}

/** What one caller may hold at once, and so the largest single job: half the budget. */
export const callerShare = (budget: number) => Math.floor(budget * CALLER_FRACTION)
