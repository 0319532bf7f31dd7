/**
 * The worst valid postal inputs against the real `datasets/out/postal.sqlite`, timed in process: each
 * case is called three times and the median of the wall time is printed with its answer (the total,
 * or the 422 problem when the work budget refuses it). Prints figures; asserts nothing.
 * Run: `bun bench/postal-worst.ts` (`PARTS=20` shortens the repeated MultiPolygon).
 */
import { openDataDir } from '../src/data/open.ts'
import { openReadonlySqlite } from '../src/data/sqlite.ts'
import { openPostalService } from '../src/domains/postal/service.ts'
import { AlmanacError } from '../src/lib/errors.ts'
import { runCase, worstCases } from '../test/domains/postal/worst.ts'

const service = openPostalService(openReadonlySqlite(openDataDir().path('postal.sqlite')))

console.log('| case | median ms | max ms | answer |\n|---|---:|---:|---|')
// `PARTS` shortens the repeated MultiPolygon (its cost is linear in the parts) where it would run for minutes.
for (const c of worstCases(Number(process.env.PARTS ?? 2000))) {
  const times: number[] = []
  let answer = ''
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now()
    try {
      const r = runCase(service, c)
      answer = `total ${r.total}, ${r.items.length} items`
    } catch (e) {
      if (!(e instanceof AlmanacError)) throw e
      answer = `${e.kind}: ${e.detail.slice(0, 70)}`
    }
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  console.log(`| ${c.name} | ${times[1]!.toFixed(1)} | ${times[2]!.toFixed(1)} | ${answer} |`)
}
