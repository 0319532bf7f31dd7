/** Probes of the ip domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // Google Public DNS is registered in the United States.
  {
    method: 'POST',
    path: '/api/v1/ip',
    body: { ip: '8.8.8.8' },
    check: (b) => expect([b.country.iso_code, b.registered_country.iso_code]).toEqual(['US', 'US']),
  },
]
