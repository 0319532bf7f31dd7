/** Probes of the postal domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // USPS ZIP 90210 is Beverly Hills, California.
  { method: 'GET', path: '/api/v1/postal/US/90210', check: (b) => expect((Array.isArray(b) ? b[0] : b).place_name).toBe('Beverly Hills') },
]
