/**
 * The SQLite quota store across real processes (test/scale-out/quota-process.ts, one store each, on one state
 * dir): two of them racing never over-spend, whether they start as sharers (`--workers`) or one owns the file
 * and the other asks for it; a SIGKILLed owner loses only what it spent since its last write; a closed one
 * loses nothing. Each step waits for the processes' answers, never for time.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { spawn, type Subprocess } from 'bun'
import { resolve } from 'node:path'
import type { Plan } from '../../src/config.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'
import { tempDirs } from '../support/temp.ts'

const SCRIPT = resolve(import.meta.dir, 'quota-process.ts')
const plan: Plan = { name: 'tiny', credits: 20, windowSeconds: 60 }
const T0 = 1_700_000_123_456

const started: Subprocess<'pipe', 'pipe', 'inherit'>[] = []
afterAll(async () => {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL')
  await Promise.all(started.map((c) => c.exited))
})
const tempDir = tempDirs('almanac-quota-processes-')

interface Holder {
  child: Subprocess<'pipe', 'pipe', 'inherit'>
  /** Sends one command and resolves with the process's JSON answer to it. */
  send(line: string): Promise<any>
  /** The answer to starting (its role). */
  opened: Promise<any>
}

function holder(dir: string, flushMs: number, start: 'shared' | 'alone'): Holder {
  const child = spawn({ cmd: ['bun', SCRIPT, dir, String(flushMs), start], stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
  started.push(child)
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  const next = async (): Promise<any> => {
    while (!buffered.includes('\n')) {
      const { value, done } = await lines.read()
      if (done) throw new Error(`quota-process exited with ${await child.exited}`)
      buffered += value
    }
    const at = buffered.indexOf('\n')
    const line = buffered.slice(0, at)
    buffered = buffered.slice(at + 1)
    return JSON.parse(line)
  }
  let queue: Promise<unknown> = next()
  const opened = queue
  return {
    child,
    opened,
    send(line) {
      child.stdin.write(`${line}\n`)
      child.stdin.flush()
      const answer = queue.then(next)
      queue = answer
      return answer
    },
  }
}

describe('SQLite quota store, two processes on one state dir', () => {
  test.each(['shared', 'alone'] as const)('started %s: 20 concurrent consumes of 3 against 20 credits admit exactly 6', async (start) => {
    const dir = tempDir()
    const a = holder(dir, 50, start)
    expect((await a.opened).role).toBe(start === 'shared' ? 'shared' : 'owner')
    const b = holder(dir, 50, start)
    expect((await b.opened).role).toBe(start === 'shared' ? 'shared' : 'waiting')
    const [fromA, fromB] = await Promise.all([a.send('consume sam 3 10'), b.send('consume sam 3 10')])
    expect(fromA.admitted + fromB.admitted).toBe(6)
    await Promise.all([a.send('close'), b.send('close')])
    const after = sqliteQuotaStore(dir)
    expect((await after.peek('sam', plan, T0)).remaining).toBe(2)
    await after.close()
  })

  test('an owner killed with SIGKILL loses only what it spent since its last write; the next one starts from the file', async () => {
    const dir = tempDir()
    // flushMs an hour: nothing is written but by the explicit tick, so what the kill loses is known.
    const owner = holder(dir, 3_600_000, 'alone')
    expect((await owner.opened).role).toBe('owner')
    expect((await owner.send('consume tom 1 5')).admitted).toBe(5)
    await owner.send('tick')
    expect((await owner.send('consume tom 1 3')).admitted).toBe(3)
    owner.child.kill('SIGKILL')
    await owner.child.exited
    // The kernel released the dead owner's lock: the next store owns the file at once.
    const next = sqliteQuotaStore(dir)
    expect(next.role()).toBe('owner')
    expect((await next.peek('tom', plan, T0)).remaining).toBe(15)
    await next.close()
  })

  test('an owner closed cleanly loses nothing', async () => {
    const dir = tempDir()
    const owner = holder(dir, 3_600_000, 'alone')
    expect((await owner.send('consume uma 1 8')).admitted).toBe(8)
    await owner.send('close')
    await owner.child.exited
    const next = sqliteQuotaStore(dir)
    expect((await next.peek('uma', plan, T0)).remaining).toBe(12)
    await next.close()
  })
})
