/**
 * One process holding a SQLite quota store, driven line by line on stdin by
 * sqlite-quota-processes.test.ts: `consume <subject> <cost> <times>` (that many at once, answered with how
 * many were admitted), `tick`, `close`. Started with the state dir, the store's flushMs and `shared` or `alone`.
 */
import type { Plan } from '../../src/config.ts'
import { sqliteQuotaStore } from '../../src/stores/quota-sqlite.ts'

const [dir, flushMs, start] = process.argv.slice(2)
const plan: Plan = { name: 'tiny', credits: 20, windowSeconds: 60 }
// Inside one minute window, whatever the wall clock says.
const T0 = 1_700_000_123_456
const store = sqliteQuotaStore(dir!, { flushMs: Number(flushMs), shared: start === 'shared' })
console.log(JSON.stringify({ role: store.role() }))

for await (const line of console) {
  const [command, subject, cost, times] = line.trim().split(' ')
  if (command === 'consume') {
    const answers = await Promise.all(Array.from({ length: Number(times) }, () => store.consume(subject!, plan, Number(cost), T0)))
    console.log(JSON.stringify({ admitted: answers.filter((a) => a.allowed).length, role: store.role() }))
  } else if (command === 'tick') {
    store.tick()
    console.log(JSON.stringify({ role: store.role() }))
  } else if (command === 'close') {
    await store.close()
    console.log(JSON.stringify({ closed: true }))
    process.exit(0)
  }
}
