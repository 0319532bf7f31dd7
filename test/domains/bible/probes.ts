/** Probes of the Bible domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // John 3:16 in the King James Version (1769 text), as printed in every edition.
  {
    method: 'GET',
    path: '/api/v1/bible/kjv/john/3/16',
    check: (b) =>
      expect(b.verses[0].text).toBe(
        'For God so loved the world, that he gave his only begotten Son, that whosoever believeth in him should not perish, but have ' +
          'everlasting life.',
      ),
  },
  // The phrase opens Genesis 1:1 in the KJV; canonical order puts it first.
  {
    method: 'GET',
    path: '/api/v1/bible/kjv/search?q=%22in%20the%20beginning%22&sort=canonical&limit=1',
    check: (b) => {
      expect(b.results[0].reference).toBe('Genesis 1:1')
      expect(b.results[0].snippet).toContain('<mark>In the beginning</mark>')
    },
  },
  // `the` over the KJV is priced over the inline threshold: a query worker answers it, so the executable
  // must find bible-worker.js among its entry points.
  {
    method: 'GET',
    path: '/api/v1/bible/kjv/search?q=the&limit=1',
    check: (b) => {
      expect(b.count).toBeGreaterThan(20_000)
      expect(b.results).toHaveLength(1)
    },
  },
]
