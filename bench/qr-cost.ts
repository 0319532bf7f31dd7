/**
 * What one QR request costs the event loop, in process (issue "Fair share"): the service's `generate` on
 * a local store and a real ledger, per request, for a maximal SVG (2,900 random characters at level L,
 * version 40, 30-day link), a maximal PNG (the same at 2000 px), a request refused because the key holds
 * its whole share, and one refused because its image is larger than the room left (the fairness bench's
 * hostile keys). Loop time = the CPU time of the event loop's thread (clock_gettime(CLOCK_THREAD_CPUTIME_ID)
 * through bun:ffi),
 * so neither a render worker's work nor time the thread waited for a CPU on a busy machine is counted;
 * the request's wall time is printed beside it. Prints p50/p90 in ms; asserts nothing. Linux only.
 * Run: `bun bench/qr-cost.ts [runs] [--loop]`; `--loop` makes every image on the loop (the encoder's own
 * cost, without the worker). Noisy on a shared machine: compare rows of one run.
 */
import { dlopen, FFIType } from 'bun:ffi'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { makeImage } from '../src/domains/qr/image.ts'
import { createLocalStore } from '../src/domains/qr/local-store.ts'
import { createRenderPool } from '../src/domains/qr/render-pool.ts'
import { openQrService } from '../src/domains/qr/service.ts'
import { stateDirLedger } from '../src/domains/qr/shares.ts'
import { createSigner } from '../src/domains/qr/signing.ts'
import { rng } from '../test/support/random.ts'

const RUNS = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 60)
const ON_LOOP = process.argv.includes('--loop')
const SHARE = 64 * 2 ** 20
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz!#$%&()*+,-./:;<=>?@[]^_{|}~'
const next = rng(40)
const randomText = () => Array.from({ length: 2900 }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('')

const dir = mkdtempSync(join(tmpdir(), 'almanac-qr-cost-'))
const now = () => Date.now()
const real = createRenderPool()
const pool = {
  ...real,
  make: (...a: Parameters<typeof real.make>) => (ON_LOOP ? Promise.resolve(makeImage(a[0], a[1], a[2])) : real.make(...a)),
}
const libc = dlopen('libc.so.6', { clock_gettime: { args: [FFIType.i32, FFIType.ptr], returns: FFIType.i32 } })
const timespec = new BigInt64Array(2)
/** This thread's time on a CPU so far, in ms (CLOCK_THREAD_CPUTIME_ID = 3). */
const threadCpu = () => {
  libc.symbols.clock_gettime(3, timespec)
  return Number(timespec[0]!) * 1e3 + Number(timespec[1]!) / 1e6
}
const ledger = stateDirLedger(dir)
const store = createLocalStore({ dir: join(dir, 'qr'), maxBytes: 2 ** 40, signer: createSigner(undefined, dir), now })
const service = openQrService(store, { ledger, perCaller: SHARE }, now, pool)

const t = Math.floor(Date.now() / 1000)
ledger.charge('full', 'filler-a', SHARE, t + 86400, t, SHARE) // holds its whole share
ledger.charge('nearly', 'filler-b', SHARE - 50_000, t + 86400, t, SHARE) // 50 KB left: a maximal SVG does not fit

async function measure(name: string, caller: (i: number) => string, options: Record<string, unknown>) {
  const texts = Array.from({ length: RUNS + 5 }, randomText)
  const times: number[] = []
  const walls: number[] = []
  const statuses = new Map<string, number>()
  for (let i = 0; i < texts.length; i++) {
    const c0 = threadCpu()
    const t0 = performance.now()
    let status = '200'
    try {
      await service.generate('text', texts[i]!, 'text', { error_correction: 'L', ttl: 2592000, ...options }, 'http://localhost', caller(i))
    } catch (e) {
      status = String((e as { kind?: string }).kind ?? e)
    }
    if (i >= 5) {
      times.push(threadCpu() - c0)
      walls.push(performance.now() - t0)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
    }
  }
  const at = (xs: number[], q: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!.toFixed(2)
  const answers = [...statuses].map(([s, n]) => `${s}×${n}`).join(' ')
  console.log(`| ${name} | ${at(times, 0.5)} | ${at(times, 0.9)} | ${at(walls, 0.5)} | ${answers} |`)
}

// A server's listening socket keeps its event loop referenced. Without one, Bun's loop polls (spins) while
// it waits for an unref'd worker's reply, which would be counted as loop time: hold a timer as the server would.
const keepAlive = setInterval(() => {}, 60_000)
try {
  console.log(`| request (${RUNS} each${ON_LOOP ? ', all on the loop' : ''}) | loop CPU ms p50 | p90 | wall ms p50 | answers |`)
  console.log('|---|---:|---:|---:|---|')
  await measure('maximal SVG (version 40, level L), stored', (i) => `svg-${i}`, { format: 'svg' })
  await measure('maximal PNG (version 40, level L, 2000 px), stored', (i) => `png-${i}`, { format: 'png', size: 2000 })
  await measure('maximal SVG, key holding its whole share (429)', () => 'full', { format: 'svg' })
  await measure('maximal SVG, key with 50 KB left (429)', () => 'nearly', { format: 'svg' })
  console.log(`\nimages made: ${JSON.stringify((service as { stats?: () => unknown }).stats?.() ?? 'n/a')}`)
} finally {
  clearInterval(keepAlive)
  service.close()
  rmSync(dir, { recursive: true, force: true })
}
