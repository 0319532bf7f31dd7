/**
 * route-match.ts answers from a cache of raw paths first: a path asked again (or after thousands of
 * others pushed it out) must match exactly what a fresh matcher, which has seen nothing, says.
 */
import { expect, test } from 'bun:test'
import { routeMatcher } from '../../src/http/routing/route-match.ts'

const routes = [
  { method: 'GET', path: '/api/v1/ip/me' },
  { method: 'GET', path: '/api/v1/ip/:ip' },
  { method: 'POST', path: '/api/v1/ip' },
  { method: 'POST', path: '/api/v1/ip/bulk' },
  { method: 'GET', path: '/api/v1/countries/' },
  { method: 'GET', path: '/api/v1/countries/:code' },
  { method: 'ALL', path: '/api/v1/postal/*' },
]

test('cached answers equal a fresh matcher, for repeated paths and after the cache turned over', () => {
  const matcher = routeMatcher(routes)
  const paths = ['/api/v1/ip', '/api/v1/ip/', '/api/v1/ip/me', '/api/v1/ip/bulk', '/api/v1/countries', '/api/v1/postal/x/y', '/nope']
  for (let i = 0; i < 20_000; i++) paths.push(`/api/v1/ip/10.0.${i >> 8}.${i & 255}`, `/api/v1/countries/${i}`)
  for (let pass = 0; pass < 2; pass++)
    for (const path of paths) expect({ path, found: matcher(path) }).toEqual({ path, found: routeMatcher(routes)(path) })
  expect(matcher('/api/v1/ip/bulk').map((m) => m.path)).toEqual(['/api/v1/ip/:ip', '/api/v1/ip/bulk'])
})
