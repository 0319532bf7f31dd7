import { describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ConfigError, DEFAULTS, loadConfig } from '../src/config.ts'

const file = (content: unknown) => {
  const path = join(mkdtempSync(join(tmpdir(), 'almanac-config-')), 'almanac.json')
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

const errorOf = (fn: () => unknown): string => {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return (e as Error).message
  }
  throw new Error('expected a ConfigError')
}

describe('configuration layers', () => {
  test('defaults apply when nothing is set', () => {
    const config = loadConfig({ env: {}, argv: [] })
    expect(config.port).toBe(8080)
    expect(config.responseForm).toBe('enveloped')
    expect(config.quotaStore).toBe('sqlite')
  })

  test('file < environment < flags, each layer overriding the one before', () => {
    const path = file({ port: 9000, host: '127.0.0.2', responseForm: 'bare', hash: { bcryptMaxRounds: 13 } })
    const fromFile = loadConfig({ env: {}, argv: ['--config', path] })
    expect([fromFile.port, fromFile.host, fromFile.responseForm, fromFile.hash.bcryptMaxRounds]).toEqual([9000, '127.0.0.2', 'bare', 13])
    // Untouched members of a nested section keep their defaults.
    expect(fromFile.hash.argon2MaxTimeCost).toBe(DEFAULTS.hash.argon2MaxTimeCost)

    const fromEnv = loadConfig({ env: { ALMANAC_PORT: '9100', ALMANAC_RESPONSE_FORM: 'enveloped' }, argv: ['--config', path] })
    expect([fromEnv.port, fromEnv.responseForm, fromEnv.host]).toEqual([9100, 'enveloped', '127.0.0.2'])

    const fromFlag = loadConfig({ env: { ALMANAC_PORT: '9100' }, argv: ['--config', path, '--port=9200'] })
    expect(fromFlag.port).toBe(9200)
  })

  test('PORT and ALMANAC_PORT are both honoured, ALMANAC_PORT winning', () => {
    expect(loadConfig({ env: { PORT: '7000' } }).port).toBe(7000)
    expect(loadConfig({ env: { PORT: '7000', ALMANAC_PORT: '7001' } }).port).toBe(7001)
  })

  test('plans, keys with plans and lists are parsed', () => {
    const config = loadConfig({
      env: {
        ALMANAC_PLANS: 'free:1000/1d,tiny:5/60s,hourly:10/h',
        ALMANAC_DEFAULT_PLAN: 'free',
        ALMANAC_API_KEYS: 'abcdefgh1234, zyxwvuts9876:tiny',
        ALMANAC_TRUSTED_PROXIES: '10.0.0.0/8, ::1',
      },
    })
    expect(config.plans.get('free')).toEqual({ name: 'free', credits: 1000, windowSeconds: 86400 })
    expect(config.plans.get('tiny')).toEqual({ name: 'tiny', credits: 5, windowSeconds: 60 })
    expect(config.plans.get('hourly')!.windowSeconds).toBe(3600)
    expect(config.apiKeys).toEqual([{ key: 'abcdefgh1234' }, { key: 'zyxwvuts9876', plan: 'tiny' }])
    expect(config.trustedProxies).toEqual(['10.0.0.0/8', '::1'])
  })
})

describe('bad settings are named', () => {
  test.each([
    [{ PORT: 'eighty' }, /^PORT: expected an integer/],
    [{ ALMANAC_PORT: '70000' }, /^ALMANAC_PORT: expected an integer from 0 to 65535/],
    [{ ALMANAC_RESPONSE_FORM: 'xml' }, /^ALMANAC_RESPONSE_FORM: expected one of enveloped, bare/],
    [{ ALMANAC_PLANS: 'free:lots/1d' }, /^ALMANAC_PLANS: expected name:credits\/window/],
    [{ ALMANAC_PLANS: 'free:10/1d', ALMANAC_DEFAULT_PLAN: 'gold' }, /^ALMANAC_DEFAULT_PLAN: plan "gold" is not among ALMANAC_PLANS/],
    [{ ALMANAC_API_KEYS: 'abcdefgh1234:gold' }, /^ALMANAC_API_KEYS: key abc… names unknown plan "gold"/],
    [{ ALMANAC_API_KEYS: 'short' }, /^ALMANAC_API_KEYS: key .* is shorter than 8 characters/],
    [{ ALMANAC_QUOTA_STORE: 'postgres://x' }, /^ALMANAC_QUOTA_STORE: expected memory, sqlite or a redis:\/\/ URL/],
    [{ ALMANAC_ACCESS_LOG: 'maybe' }, /^ALMANAC_ACCESS_LOG: expected true or false/],
  ])('%o', (env, message) => {
    expect(errorOf(() => loadConfig({ env }))).toMatch(message)
  })

  test('plan names a plain object already answers are refused', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect(() => loadConfig({ env: { ALMANAC_PLANS: `${name}:5/1h`, ALMANAC_DEFAULT_PLAN: name } })).toThrow(
        `ALMANAC_PLANS: plan name ${name} is reserved`,
      )
    }
  })

  test('a flag is named as the operator wrote it', () => {
    expect(errorOf(() => loadConfig({ env: {}, argv: ['--port', '-1'] }))).toMatch(/^--port: /)
  })

  test('config file: unknown setting, bad value and bad JSON are named with the file', () => {
    const unknown = file({ prot: 1 })
    expect(errorOf(() => loadConfig({ env: {}, argv: ['--config', unknown] }))).toBe(
      `${unknown}: unknown setting prot (did you mean port?)`,
    )
    const bad = file({ hash: { bcryptMaxRounds: 99 } })
    expect(errorOf(() => loadConfig({ env: {}, argv: ['--config', bad] }))).toMatch(
      new RegExp(`^${bad}: hash.bcryptMaxRounds: expected an integer from 4 to 31`),
    )
    const broken = file('{"port": ')
    expect(errorOf(() => loadConfig({ env: {}, argv: ['--config', broken] }))).toMatch(new RegExp(`^--config ${broken}: `))
    expect(errorOf(() => loadConfig({ env: {}, argv: ['--config', '/nonexistent/almanac.json'] }))).toMatch(
      /^--config \/nonexistent\/almanac.json: /,
    )
  })
})
