/**
 * How a Redis Cluster or Sentinel group is named (issue 46): `redis+cluster://` and `redis+sentinel://` in
 * the store settings, read into the nodes, the master's name, ACL credentials and TLS; passwords never
 * shown; and the settings accepting them where they accept `redis://`.
 */
import { expect, test } from 'bun:test'
import { loadConfig } from '../../src/config.ts'
import { isTopologyUrl, parseTopologyUrl } from '../../src/stores/redis-topology.ts'
import { redactUrl } from '../../src/stores/redis.ts'

test('a cluster URL: every seed node, credentials percent-decoded, TLS by the scheme', () => {
  expect(parseTopologyUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002')).toEqual({
    kind: 'cluster',
    tls: false,
    nodes: [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ],
  })
  expect(parseTopologyUrl('rediss+cluster://almanac:p%40ss:w@redis-a,redis-b:7000')).toEqual({
    kind: 'cluster',
    tls: true,
    username: 'almanac',
    password: 'p@ss:w',
    nodes: [
      { host: 'redis-a', port: 6379 },
      { host: 'redis-b', port: 7000 },
    ],
  })
})

test("a Sentinel URL: the sentinels (26379 by default), the master's name, its db, the sentinels' password", () => {
  expect(parseTopologyUrl('redis+sentinel://:secret@s1,s2:26380/mymaster/2?sentinel_password=s3cr3t')).toEqual({
    kind: 'sentinel',
    tls: false,
    password: 'secret',
    nodes: [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26380 },
    ],
    master: 'mymaster',
    db: 2,
    sentinelPassword: 's3cr3t',
  })
  expect(() => parseTopologyUrl('redis+sentinel://s1:26379')).toThrow('name the master')
  expect(() => parseTopologyUrl('redis+cluster://a:b:c')).toThrow('is not host:port')
})

test('passwords are hidden in messages; plain redis:// is not a topology (it stays on the one-node client)', () => {
  expect(redactUrl('redis+sentinel://u:pw@s1:1/m?sentinel_password=x')).toBe('redis+sentinel://u:***@s1:1/m?sentinel_password=***')
  expect(isTopologyUrl('redis://h:6379')).toBe(false)
  expect(isTopologyUrl('rediss+cluster://h:6379')).toBe(true)
})

test('the store settings take topology URLs where they take redis://', () => {
  const url = 'redis+cluster://10.0.0.1:7000,10.0.0.2:7000'
  const sentinel = 'rediss+sentinel://s1:26379,s2:26379/almanac'
  const config = loadConfig({ env: { ALMANAC_QUOTA_STORE: url, ALMANAC_KEY_STORE: sentinel } })
  expect(config.stores.quota).toEqual({ kind: 'redis', url })
  expect(config.stores.keys).toEqual({ kind: 'redis', url: sentinel })
  expect(config.stores.rdapCache).toEqual({ kind: 'redis', url })
})
