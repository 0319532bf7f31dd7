/** The OpenAPI document describes each hashing route's formats, defaults, ranges and this server's ceilings. */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import hash from '../../../src/domains/hash/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'

let app: TestApp
let paths: Record<string, any>
beforeAll(async () => {
  app = await testApp({ domains: [hash], env: { ALMANAC_HASH_BCRYPT_MAX_ROUNDS: '13' } })
  paths = (await app.json('GET', '/openapi.json')).body.paths
})
afterAll(() => app.close())

const body = (name: string) => paths[`/api/v1/hash/${name}`].post.requestBody.content['application/json'].schema

test('all seven routes are documented, input required', () => {
  for (const name of ['md5', 'sha1', 'sha256', 'sha512', 'bcrypt', 'scrypt', 'argon2id']) {
    expect(body(name).required).toEqual(['input'])
    expect(body(name).properties.input.description).toContain('262144 bytes')
  }
})

test('bcrypt: range 4-31, default 12, and the configured ceiling', () => {
  const rounds = body('bcrypt').properties.rounds
  expect(rounds).toMatchObject({ type: 'integer', minimum: 4, maximum: 31, default: 12 })
  expect(rounds.description).toContain('ceiling: 13')
})

test('scrypt: both spellings, power-of-two n, unpadded standard base64 in the description', () => {
  const props = body('scrypt').properties
  for (const k of ['n', 'r', 'p', 'cost_factor', 'block_size', 'parallelism']) expect(props[k].type).toBe('integer')
  expect(props.n.description).toContain('power of two')
  expect(props.n.description).toContain('hash.scryptMaxMemoryBytes')
  expect(paths['/api/v1/hash/scrypt'].post.description).toContain('standard base64')
  expect(paths['/api/v1/hash/scrypt'].post.description).toContain('without `=` padding')
})

test('argon2id: defaults and ceilings', () => {
  const props = body('argon2id').properties
  expect(props.time_cost).toMatchObject({ default: 3, minimum: 1 })
  expect(props.memory_cost).toMatchObject({ default: 65536, minimum: 8 })
  expect(props.parallelism).toMatchObject({ default: 4, minimum: 1 })
  expect(props.memory_cost.description).toContain('262144 KiB')
  expect(paths['/api/v1/hash/argon2id'].post.description).toContain('$argon2id$v=19$m=')
})
