/** Probes of the timezones domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // India has kept UTC+05:30 without DST since 1945.
  {
    method: 'GET',
    path: '/api/v1/timezones-convert?from=UTC&to=Asia/Kolkata&time=12:00&date=2026-01-15',
    check: (b) => expect(b.to_time_24h).toBe('17:30:00'),
  },
  // Japan has had no DST since 1951: no period, no scheduled change, and the local time carries +09:00.
  {
    method: 'GET',
    path: '/api/v1/timezones/Asia%2FTokyo',
    check: (b) => {
      expect(b.datetime).toEndWith('+09:00')
      expect([b.dst_from, b.dst_until, b.next_transition]).toEqual([null, null, null])
    },
  },
]
