/** Probes of the postal domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // USPS ZIP 90210 is Beverly Hills, California.
  { method: 'GET', path: '/api/v1/postal/US/90210', check: (b) => expect((Array.isArray(b) ? b[0] : b).place_name).toBe('Beverly Hills') },
  // Nearest first within 500 km of Beverly Hills: past the inline work, so a query worker answers it and
  // the executable must find postal-worker.js among its entry points.
  {
    method: 'POST',
    path: '/api/v1/postal/US/nearby',
    body: { lat: 34.0901, lng: -118.4065, radius_km: 500, limit: 1 },
    check: (b) => {
      expect(b.results[0].postal_code).toBe('90210')
      expect(b.count).toBeGreaterThan(1000)
    },
  },
]
