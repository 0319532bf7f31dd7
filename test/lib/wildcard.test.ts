/** The linear wildcard matcher against Python's fnmatch (stdlib) over seeded random patterns and texts. */
import { expect, test } from 'bun:test'
import { wildcardMatch } from '../../src/lib/wildcard.ts'
import { pythonJson } from '../support/python.ts'
import { rng } from '../support/random.ts'

test('agrees with fnmatch.fnmatchcase on 5,000 random patterns over a small alphabet', () => {
  const random = rng(20261123)
  const pick = (alphabet: string, max: number) =>
    Array.from({ length: Math.floor(random() * max) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('')
  const cases = Array.from({ length: 5000 }, () => [pick('ab*#-', 8), pick('ab#-', 10)] as [string, string])
  // `*` is fnmatch's only special character in this alphabet, so the two must agree on every case.
  const oracle = pythonJson<boolean[]>(
    'import sys, json, fnmatch\nprint(json.dumps([fnmatch.fnmatchcase(t, p) for p, t in json.load(sys.stdin)]))',
    cases,
  )
  const ours = cases.map(([p, t]) => wildcardMatch(p, t))
  expect(ours.filter((m, i) => m !== oracle[i]).length).toBe(0)
  expect(oracle.filter(Boolean).length).toBeGreaterThan(100)
})

test('thirty stars before a letter that never comes: a plain answer (a RegExp took 11 s; a hang times the test out)', () => {
  const pattern = '*'.repeat(30) + 'Z'
  const text = 'A'.repeat(64)
  expect(wildcardMatch(pattern, text)).toBe(false)
  expect(wildcardMatch(pattern, text + 'Z')).toBe(true)
  expect(wildcardMatch('*A*A*A*A*A*A*A*A*A*A*Z', text + 'Z')).toBe(true)
})
