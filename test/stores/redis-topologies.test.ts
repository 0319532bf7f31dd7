/**
 * The Redis topologies the shared stores must run on (issue 46), as the tests start them: a cluster of three
 * masters with a replica each, every slot served, whose replica takes over when its master is killed; and a
 * Sentinel group whose sentinels promote the replica when the master is killed. These prove the harness that
 * the store tests on Cluster and Sentinel stand on.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { ask, startCluster, startSentinel, waitFor, type TestCluster, type TestSentinel } from '../support/redis-topologies.ts'

const opened: (TestCluster | TestSentinel)[] = []
afterAll(async () => {
  for (const t of opened) await t.close()
}, 30_000)

describe('a Redis cluster of three masters and three replicas', () => {
  test('serves every slot; a killed master is replaced by its replica', async () => {
    const cluster = await startCluster(3, 1)
    opened.push(cluster)
    const info = String(await ask(cluster.ports[0]!, 'CLUSTER', ['INFO']))
    expect(info).toContain('cluster_slots_assigned:16384')
    expect(info).toContain('cluster_known_nodes:6')
    const masters = await cluster.masters()
    expect(masters.length).toBe(3)
    // The slot of a key belongs to one master, which answers it; the others redirect.
    const slot = await ask(masters[0]!, 'CLUSTER', ['KEYSLOT', 'almanac:{k}:x'])
    const owners = await Promise.all(masters.map(async (p) => [p, await ask(p, 'SET', ['almanac:{k}:x', '1'])] as const))
    expect(owners.filter(([, reply]) => reply === 'OK').length).toBe(1)
    // A hash tag decides the slot: another key of the same tag shares it.
    expect(typeof slot === 'number' && slot >= 0 && slot < 16384).toBe(true)
    expect(await ask(masters[1]!, 'CLUSTER', ['KEYSLOT', 'other:{k}:y'])).toBe(slot)

    await cluster.kill(masters[0]!)
    await waitFor('a replica promoted', async () => {
      const now = await cluster.masters()
      return now.length === 3 && !now.includes(masters[0]!)
    })
    const live = cluster.ports.find((p) => p !== masters[0])!
    await waitFor('cluster ok again', async () => String(await ask(live, 'CLUSTER', ['INFO'])).includes('cluster_state:ok'))
  }, 60_000)
})

describe('a Sentinel group', () => {
  test('names the master; when it is killed, names the promoted replica', async () => {
    const group = await startSentinel(1)
    opened.push(group)
    const [first, replica] = group.dataPorts as [number, number]
    expect(await group.master()).toBe(first)
    await group.kill(first)
    await waitFor('the sentinels agree on the replica', async () => (await group.master()) === replica)
    expect((await ask(replica, 'ROLE'))[0]).toBe('master')
  }, 60_000)
})
