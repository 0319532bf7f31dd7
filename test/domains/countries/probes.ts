/** Probes of the countries domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // ISO 3166-1: France is FRA / 250.
  { method: 'GET', path: '/api/v1/countries/FR', check: (b) => expect([b.alpha3 ?? b.alpha_3, b.numeric]).toEqual(['FRA', '250']) },
  // Portugal's only land neighbour is Spain; its flag is the regional indicators P and T.
  {
    method: 'GET',
    path: '/api/v1/countries/PT?fields=borders,flag',
    check: (b) => expect(b).toEqual({ borders: ['ES'], flag: '\u{1F1F5}\u{1F1F9}' }),
  },
]
