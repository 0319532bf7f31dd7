/**
 * A failover of the shared stores under HTTP load, end to end: `almanac serve` from source with its key store,
 * quota store and usage ledger on a Redis Cluster (3 masters, 2 replicas each: two kills may hit one shard) or a
 * Sentinel group, a steady stream of lookups with a key made by `almanac keys create`, and a master killed
 * mid-stream (bench/failover.ts runs it; its rows cover every topology, policy and master, these the ones CI
 * can afford). What must hold, whatever the master and the policy:
 * - service resumes by itself: the stream ends on 1,000 answers in a row that are 2xx, after the topology names
 *   a new master, with no restart;
 * - every failing answer is a 503 `unavailable` naming the store that could not be asked: the key store (a key
 *   that cannot be looked up cannot be authenticated, under either policy) or, fail-closed only, the quota
 *   store; fail-open serves uncounted instead. A key cached by the server may keep working through the kill;
 * - `almanac usage`, after SIGTERM, reports exactly the answers that had a caller (all but the key store's
 *   503s): no ledger batch lost or counted twice, none dropped, those failing during the outage retried;
 * - the quota counter equals the credited answers: none over-spent. On a cluster the key's counter is kept off the
 *   killed master, so no consume can be cut off with the master; on Sentinel it is on it, and a consume applied and
 *   replicated whose reply died with the master is spent though its request was not counted: at most one per
 *   request in flight at the kill.
 * The gap and the failures are printed, not asserted: they are Redis's failover timing.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { describeRun, IN_FLIGHT, gapOf, runFailover, type Policy, type TopologyKind, type Victim } from '../../bench/failover.ts'
import { startSomeTopologies, type StartedTopologies } from '../support/redis-topologies.ts'
import { tempDirs } from '../support/temp.ts'

let topologies: StartedTopologies
beforeAll(async () => {
  topologies = await startSomeTopologies(2, 1)
}, 60_000)
afterAll(() => topologies?.close(), 30_000)
// After the afterAll above: the servers have stopped before their state dirs go.
const tempDir = tempDirs('almanac-failover-http-')

const CASES: [TopologyKind, Policy, Victim][] = [
  ['cluster', 'fail-closed', 'key store'],
  ['cluster', 'fail-closed', 'ledger'],
  ['sentinel', 'fail-open', 'Sentinel'],
]

describe('a store master killed under HTTP load', () => {
  test.each(CASES)(
    '%s, %s, the %s master killed: resumes by itself, 503s only, usage and credits exact',
    async (topology, policy, victim) => {
      const result = await runFailover(topologies, topology, policy, victim, tempDir)
      console.log(describeRun(result))
      const gap = gapOf(result)
      const ok = (status: number) => status >= 200 && status < 300
      // (a) Resumed: runFailover throws unless the stream ends on 1,000 2xx in a row after the takeover; checked here too.
      expect(result.answers.slice(-1000).every((a) => ok(a.status))).toBe(true)
      // (b) A failure is a 503 naming the store it could not ask; fail-open never refuses for the quota store.
      const allowed = ['503 unavailable (key store)', ...(policy === 'fail-closed' ? ['503 unavailable (quota store)'] : [])]
      expect(Object.keys(gap.byProblem).filter((what) => !allowed.includes(what))).toEqual([])
      if (policy === 'fail-closed') expect(result.answers.filter((a) => ok(a.status) && !a.counted).length).toBe(0)
      // (c) The ledger holds every answer with a caller, once; the meter dropped nothing and was stopped cleanly.
      expect(result.serverExit).toBe(0)
      expect(result.usage.droppedBatches).toBe(0)
      expect(result.usage.reported).toEqual(result.usage.expected)
      // Whether a batch failed and was written again is printed, not asserted: a write waits up to the store's
      // timeout, so one may straddle a short outage and go through.
      // (d) Credits: the counter holds exactly the counted answers, less what a kill of the counter's own master may leave.
      const overSpent = result.spent - result.credited
      expect(overSpent).toBeGreaterThanOrEqual(0)
      expect(overSpent).toBeLessThanOrEqual(topology === 'sentinel' ? IN_FLIGHT : 0)
    },
    60_000,
  )
})
