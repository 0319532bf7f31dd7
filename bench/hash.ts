/**
 * Hashing speed and isolation. Over HTTP (default config: one KDF worker per core):
 * 1. digests/s: POST /hash/sha256, /hash/sha512 and /hash/md5, each as a ratio of a hello-world run just before it
 *    (`compareWithHello`, BENCH_ROUNDS rounds);
 * 2. isolation (a server of its own): p99 of /hash/sha256 idle, then again while 4 clients hammer /hash/bcrypt rounds 12
 *    (target: under 3x the idle p99). Also in-process digest and KDF rates for scale.
 * Prints figures; asserts nothing. Run: `bun bench/hash.ts`.
 */
import { availableParallelism } from 'node:os'
import { argon2id, bcrypt, scrypt } from '../src/domains/hash/kdf.ts'
import { digest } from '../src/domains/hash/service.ts'
import { compareWithHello, load, printCallsHeader, printTable, startAlmanac, timeCalls } from './lib.ts'

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)

printCallsHeader(`In-process (one thread, ${availableParallelism()} cores on this machine)`)
const time = (label: string, rounds: number, fn: () => unknown) => timeCalls(label, rounds, () => (fn(), true))
time('sha256, 16 bytes', 200_000, () => digest('sha256', 'correct horse 16'))
time('sha256, 4 KiB', 50_000, () => digest('sha256', 'x'.repeat(4096)))
time('sha512, 256 KiB (the limit)', 500, () => digest('sha512', 'x'.repeat(262144)))
time('bcrypt rounds 12 (default)', 4, () => bcrypt('correct horse', { rounds: 12 }))
time('scrypt n=16384 r=8 p=1 (default)', 8, () => scrypt('correct horse', { n: 16384, r: 8, p: 1 }))
time('argon2id t=3 m=65536 p=4 (default)', 8, () => argon2id('correct horse', { time_cost: 3, memory_cost: 65536, parallelism: 4 }))

const sha256 = { method: 'POST', path: '/api/v1/hash/sha256', body: { input: 'correct horse battery staple' }, seconds: SECONDS }
await compareWithHello(`Digests over HTTP (wrk, 32 connections, ${SECONDS} s each)`, [
  { name: 'POST /hash/sha256 (28 bytes)', ...sha256 },
  { name: 'POST /hash/sha512 (4 KiB)', ...sha256, path: '/api/v1/hash/sha512', body: { input: 'x'.repeat(4096) } },
  { name: 'POST /hash/md5 (28 bytes, Form B)', ...sha256, path: '/api/v1/hash/md5', headers: { 'x-response-form': 'bare' } },
])

const almanac = await startAlmanac()
try {
  // Latency probe: a few connections, so p99 measures waiting behind other work, not wrk's own queueing.
  const probe = { ...sha256, connections: 4, threads: 1 }
  const idle = await load(almanac, probe)
  const hammer = load(almanac, {
    method: 'POST',
    path: '/api/v1/hash/bcrypt',
    body: { input: 'correct horse battery staple', rounds: 12 },
    connections: 4,
    threads: 1,
    seconds: SECONDS + 2,
  })
  await Bun.sleep(1000) // let the bcrypt load reach steady state (every worker busy, a queue behind them)
  const busy = await load(almanac, probe)
  const bcryptLoad = await hammer
  printTable('Isolation: /hash/sha256 (4 connections) idle vs while 4 clients hammer /hash/bcrypt rounds 12', [
    { name: 'sha256 idle', result: idle },
    { name: 'sha256 while bcrypt is hammered', result: busy },
    { name: 'the bcrypt hammer itself (4 connections)', result: bcryptLoad },
  ])
  const ratio = busy.p99Ms / idle.p99Ms
  console.log(
    `\nsha256 p99: idle ${idle.p99Ms.toFixed(2)} ms, under bcrypt load ${busy.p99Ms.toFixed(2)} ms -> ${ratio.toFixed(2)}x (target < 3x)`,
  )
} finally {
  await almanac.stop()
}
