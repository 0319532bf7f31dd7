/**
 * The stores are read once from their settings into `config.stores` (a StoreLocation each); nothing
 * downstream re-reads the spelling. The RDAP cache has its own setting, ALMANAC_EMAIL_RDAP_CACHE, whose
 * default keeps what the server did before it existed: the quota store's Redis when that is Redis, else
 * the state dir's SQLite.
 */
import { expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../src/config.ts'

const stores = (env: Record<string, string>) => loadConfig({ env: { ALMANAC_STATE_DIR: '/var/lib/almanac', ...env } }).stores

test('defaults: quota, keys and the RDAP cache in the state dir SQLite', () => {
  expect(stores({})).toEqual({
    quota: { kind: 'sqlite', dir: '/var/lib/almanac' },
    keys: { kind: 'sqlite', dir: '/var/lib/almanac' },
    rdapCache: { kind: 'sqlite', dir: '/var/lib/almanac' },
  })
})

test('a Redis quota store: keys and the RDAP cache follow it unless set; the state dir flag counts', () => {
  const url = 'rediss://user:pw@redis.example:6380/2'
  expect(stores({ ALMANAC_QUOTA_STORE: url })).toEqual({
    quota: { kind: 'redis', url },
    keys: { kind: 'redis', url },
    rdapCache: { kind: 'redis', url },
  })
  const config = loadConfig({ env: { ALMANAC_QUOTA_STORE: 'sqlite', ALMANAC_EMAIL_RDAP_CACHE: 'memory' }, argv: ['--state-dir', '/srv/s'] })
  expect(config.stores).toEqual({
    quota: { kind: 'sqlite', dir: '/srv/s' },
    keys: { kind: 'sqlite', dir: '/srv/s' },
    rdapCache: { kind: 'memory' },
  })
  expect(stores({ ALMANAC_QUOTA_STORE: url, ALMANAC_KEY_STORE: 'sqlite', ALMANAC_EMAIL_RDAP_CACHE: 'sqlite' })).toEqual({
    quota: { kind: 'redis', url },
    keys: { kind: 'sqlite', dir: '/var/lib/almanac' },
    rdapCache: { kind: 'sqlite', dir: '/var/lib/almanac' },
  })
  expect(stores({ ALMANAC_EMAIL_RDAP_CACHE: 'redis://cache:6379' }).rdapCache).toEqual({ kind: 'redis', url: 'redis://cache:6379' })
})

test('a bad RDAP cache is refused with the name it was given', () => {
  expect(() => stores({ ALMANAC_EMAIL_RDAP_CACHE: 'http://cache' })).toThrow(
    new ConfigError('ALMANAC_EMAIL_RDAP_CACHE: expected memory, sqlite or a redis:// URL, got "http://cache"'),
  )
})
