/** Probes of the hash domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // FIPS 180-2 appendix B.1 test vector.
  {
    method: 'POST',
    path: '/api/v1/hash/sha256',
    body: { input: 'abc' },
    check: (b) => expect(b.hash).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'),
  },
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
]
