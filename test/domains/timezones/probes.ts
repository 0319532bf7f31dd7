/** Probes of the timezones domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // India has kept UTC+05:30 without DST since 1945.
  { method: 'GET', path: '/api/v1/timezones-convert?from=UTC&to=Asia/Kolkata&time=12:00&date=2026-01-15', check: (b) => expect(b.to_time_24h).toBe('17:30:00') },
]
