/**
 * `RedisConnection.subscribe` on each kind of Redis the stores run on: messages published by another
 * connection arrive (the stores need no order: each message names what to forget); a lost subscriber
 * connection says so (`live` false, so a cache can stop trusting its messages) and comes back by itself,
 * on the same node, on the cluster's next node, or on the Sentinel group's new master.
 */
import { afterEach, describe, expect, test } from 'bun:test'
import { redisConnection, type RedisConnection } from '../../src/stores/redis.ts'
import type { Subscription } from '../../src/stores/redis-connection.ts'
import { ask, redisServers, waitFor } from '../support/redis-topologies.ts'

const servers = redisServers()
const opened: { close(): void }[] = []
afterEach(() => {
  for (const o of opened.splice(0)) o.close()
})

/** A publisher connection and a subscription on `channel`, recording what it hears and each change of `live`. */
function listen(url: string, channel: string) {
  const publisher = redisConnection(url, { maxBackoffMs: 200 })
  const heard: string[] = []
  const changes: boolean[] = []
  const subscriber = redisConnection(url, { maxBackoffMs: 200 })
  const subscription = subscriber.subscribe(channel, { message: (text) => heard.push(text), live: (up) => changes.push(up) })
  opened.push(publisher, subscriber, subscription)
  return { publisher, subscription, heard, changes }
}

/** Publishes `text` until the subscription has heard it: a message published while it was down is lost by design. */
async function heardAfterPublishing(
  publisher: RedisConnection,
  subscription: Subscription,
  channel: string,
  text: string,
  heard: string[],
) {
  await waitFor(`the subscription to be live`, async () => subscription.live)
  await waitFor(`"${text}" to be heard`, async () => {
    await publisher.command('PUBLISH', [channel, text]).catch(() => {})
    return heard.includes(text)
  })
}

describe.each(['single', 'cluster', 'sentinel'] as const)('subscribe on %s', (kind) => {
  // Not in order on a cluster: each PUBLISH may go to another node, and the bus carries them independently.
  test('hears everything another connection publishes', async () => {
    const channel = servers.prefix('sub-order')
    const { publisher, subscription, heard, changes } = listen(servers.url(kind), channel)
    await waitFor('the subscription to be live', async () => subscription.live)
    for (const text of ['one', 'two', 'three']) await publisher.command('PUBLISH', [channel, text])
    await waitFor('three messages', async () => heard.length === 3)
    expect(heard.toSorted()).toEqual(['one', 'three', 'two'])
    expect(changes).toEqual([true])
    subscription.close()
    expect(subscription.live).toBe(false)
    expect(changes).toEqual([true, false])
  })
})

test('a single node restarted: live goes false, then true again, and messages flow once more', async () => {
  const channel = servers.prefix('sub-restart')
  const { publisher, subscription, heard, changes } = listen(servers.url('single'), channel)
  await heardAfterPublishing(publisher, subscription, channel, 'before', heard)
  await servers.single.stop()
  await waitFor('the subscription to know it is down', async () => !subscription.live)
  await servers.single.start()
  await heardAfterPublishing(publisher, subscription, channel, 'after', heard)
  expect(changes).toEqual([true, false, true])
}, 30_000)

test('a cluster node the subscriber sits on killed: it moves to another node and hears PUBLISH there', async () => {
  const channel = servers.prefix('sub-cluster-kill')
  const url = servers.url('cluster')
  const { publisher, subscription, heard, changes } = listen(url, channel)
  await heardAfterPublishing(publisher, subscription, channel, 'before', heard)
  // The first dial goes to the first seed node.
  const first = Number(url.split('//')[1]!.split(',')[0]!.split(':')[1])
  expect(String(await ask(first, 'PUBSUB', ['CHANNELS', channel]))).toContain(channel)
  await servers.cluster.kill(first)
  await waitFor('the subscription to know it is down', async () => !subscription.live)
  await heardAfterPublishing(publisher, subscription, channel, 'after', heard)
  expect(changes).toEqual([true, false, true])
}, 60_000)

test('the Sentinel master killed: the subscriber finds the promoted replica and hears PUBLISH there', async () => {
  const channel = servers.prefix('sub-sentinel-kill')
  const { publisher, subscription, heard, changes } = listen(servers.url('sentinel'), channel)
  await heardAfterPublishing(publisher, subscription, channel, 'before', heard)
  const master = await servers.sentinel.master()
  expect(master).not.toBeNull()
  await servers.sentinel.kill(master!)
  await waitFor('the subscription to know it is down', async () => !subscription.live)
  await heardAfterPublishing(publisher, subscription, channel, 'after', heard)
  expect(await servers.sentinel.master()).not.toBe(master)
  expect(changes).toEqual([true, false, true])
}, 60_000)
