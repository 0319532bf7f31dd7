/**
 * One request per domain whose answer is known from outside this project, sent to the compiled
 * executable. A landed domain (one that mounts routes) must have a probe here: add one line-group
 * when a domain lands. Answers are asked for in Form B (`X-Response-Form: bare`).
 */
import { expect } from 'bun:test'

export interface Probe {
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  /** Throws (via expect) when the answer is wrong. */
  check(body: any): void | Promise<void>
}

export const PROBES: Record<string, Probe[]> = {
  hash: [
    // FIPS 180-2 appendix B.1 test vector.
    { method: 'POST', path: '/api/v1/hash/sha256', body: { input: 'abc' }, check: (b) => expect(b.hash).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad') },
    // A KDF runs on the worker pool: proves the worker entry point made it into the executable.
    {
      method: 'POST',
      path: '/api/v1/hash/bcrypt',
      body: { input: 'correct horse', rounds: 4 },
      check: async (b) => {
        expect(b.hash).toStartWith('$2b$04$')
        expect(await Bun.password.verify('correct horse', b.hash)).toBe(true)
      },
    },
  ],
  timezones: [
    // India has kept UTC+05:30 without DST since 1945.
    { method: 'GET', path: '/api/v1/timezones-convert?from=UTC&to=Asia/Kolkata&time=12:00&date=2026-01-15', check: (b) => expect(b.to_time_24h).toBe('17:30:00') },
  ],
  countries: [
    // ISO 3166-1: France is FRA / 250.
    { method: 'GET', path: '/api/v1/countries/FR', check: (b) => expect([b.alpha3 ?? b.alpha_3, b.numeric]).toEqual(['FRA', '250']) },
  ],
  postal: [
    // USPS ZIP 90210 is Beverly Hills, California.
    { method: 'GET', path: '/api/v1/postal/US/90210', check: (b) => expect((Array.isArray(b) ? b[0] : b).place_name).toBe('Beverly Hills') },
  ],
  ip: [
    // Google Public DNS is registered in the United States.
    { method: 'POST', path: '/api/v1/ip', body: { ip: '8.8.8.8' }, check: (b) => expect(b.country.iso_code).toBe('US') },
  ],
}
