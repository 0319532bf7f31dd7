/** Probes of the countries domain for the executable test (test/build/probes.ts). */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // ISO 3166-1: France is FRA / 250.
  { method: 'GET', path: '/api/v1/countries/FR', check: (b) => expect([b.alpha3 ?? b.alpha_3, b.numeric]).toEqual(['FRA', '250']) },
]
