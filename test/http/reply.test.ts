/**
 * Stable replies keep their JSON (reply.ts `stable`): the spliced text must be exactly what the plain path
 * gives, in both forms, for single items and lists with their siblings, and `fields` must bypass the cache.
 */
import { describe, expect, test } from 'bun:test'
import { applyFields, bodyJson, list, one, type Reply } from '../../src/http/reply/reply.ts'
import type { AlmanacError } from '../../src/lib/errors.ts'

const item = { code: 'FR-971', name: 'Guadeloupe', note: 'Côte-d’Or → “quoted”', nested: { a: [1, 2], b: null } }
const items = [item, { ...item, code: 'FR-972', name: 'Martinique' }]

/**
 * The SPEC's two forms ("Response forms"), written out: Form A `{status, data, error}` with list siblings
 * such as `total`; Form B the item itself, or `{count, ...siblings, results}` for a list.
 */
function expectedBody(reply: Reply, form: 'enveloped' | 'bare'): unknown {
  const data = JSON.parse(JSON.stringify(reply.data) ?? 'null')
  if (form === 'enveloped') return { status: 'ok', data, error: null, ...reply.enveloped }
  return reply.kind === 'one' ? data : { ...reply.bare, results: data }
}

const cases: [string, (stable: boolean) => Reply][] = [
  ['one', (stable) => one(item, { stable })],
  ['list without siblings', (stable) => list(items, { stable })],
  ['list with total', (stable) => list(items, { total: 7, stable })],
  [
    'list with extra siblings',
    (stable) => list(items, { total: 2, enveloped: { app_version: '1.2.3' }, bare: { app_version: '1.2.3' }, stable }),
  ],
  ['empty list', (stable) => list([], { total: 0, stable })],
  // Long lists are serialized in chunks: lengths around the chunk size, text beyond Latin-1, and items
  // that are not objects (undefined becomes null inside an array, as JSON.stringify does).
  ...[9, 10, 11, 20, 21, 100].map((n): [string, (stable: boolean) => Reply] => [
    `list of ${n} mixed items`,
    (stable) =>
      list(
        Array.from(
          { length: n },
          (_, i) => [{ ...item, i }, `İstanbul ${i}`, i, null, undefined, { name: 'Ōsaka', skip: undefined }][i % 6],
        ),
        { total: n, stable },
      ),
  ]),
]

describe('stable replies', () => {
  for (const [name, make] of cases) {
    for (const form of ['enveloped', 'bare'] as const) {
      test(`${name}, ${form}: the form's shape, and the same JSON as the plain path, first and second time`, () => {
        const plain = bodyJson(make(false), form, undefined)
        expect(JSON.parse(plain)).toEqual(expectedBody(make(false), form))
        const reply = make(true)
        expect(bodyJson(reply, form, undefined)).toBe(plain)
        expect(bodyJson(reply, form, undefined)).toBe(plain)
      })
    }
  }

  test('fields select from the data, not from the kept JSON', () => {
    const reply = one(item, { stable: true })
    bodyJson(reply, 'bare', undefined)
    expect(JSON.parse(bodyJson(reply, 'bare', 'name'))).toEqual({ name: 'Guadeloupe' })
    expect(JSON.parse(bodyJson(reply, 'enveloped', 'code,nested.a'))).toEqual({
      status: 'ok',
      data: { code: 'FR-971', nested: { a: [1, 2] } },
      error: null,
    })
  })

  test('the JSON is kept by the data object: the same object answers from the cache', () => {
    const data = { name: 'first' }
    expect(bodyJson(one(data, { stable: true }), 'bare', undefined)).toBe('{"name":"first"}')
    data.name = 'changed' // a broken promise: stable data must never change; the kept JSON shows it
    expect(bodyJson(one(data, { stable: true }), 'bare', undefined)).toBe('{"name":"first"}')
    expect(bodyJson(one(data), 'bare', undefined)).toBe('{"name":"changed"}')
  })
})

describe('fields', () => {
  const planet = { name: 'mars', orbit: { days: 687, moons: { count: 2, names: ['Phobos', 'Deimos'] } } }
  const refused = (fields: string, data: unknown = planet) => {
    try {
      applyFields(one(data), fields)
    } catch (e) {
      return (e as AlmanacError).detail
    }
    return null
  }

  test('a whole key wins over a path into it, whichever comes first', () => {
    expect(applyFields(one(planet), 'orbit.days,orbit')).toEqual({ orbit: planet.orbit })
    expect(applyFields(one(planet), 'orbit,orbit.days')).toEqual({ orbit: planet.orbit })
  })

  test('paths go as deep as they are written; empty names between commas are ignored', () => {
    expect(applyFields(one(planet), 'orbit.moons.count,,name,')).toEqual({ name: 'mars', orbit: { moons: { count: 2 } } })
  })

  test('only own names count: inherited ones such as toString are unknown, not selected', () => {
    expect(refused('toString')).toContain('Unknown field toString')
    expect(refused('name,constructor')).toContain('constructor')
    expect(refused('orbit.hasOwnProperty')).toContain('orbit.hasOwnProperty')
  })

  test('an unknown nested name is reported with the whole path the caller wrote', () => {
    expect(refused('orbit.rings.count')).toContain('Unknown field orbit.rings.count in fields')
    expect(refused('orbit..days')).toContain('orbit..days')
  })

  test('an unknown name near one there is, at any depth, is answered with it and the rest of the path (issue 45)', () => {
    expect(refused('nmae')).toStartWith('Unknown field nmae (did you mean name?) in fields.')
    expect(refused('orbit.moon.count')).toStartWith('Unknown field orbit.moon.count (did you mean orbit.moons.count?) in fields.')
    expect(refused('orbt.days,orbit.dayz')).toStartWith(
      'Unknown fields orbt.days (did you mean orbit.days?), orbit.dayz (did you mean orbit.days?) in fields.',
    )
  })

  test('the same fields text asked again selects the same', () => {
    const first = applyFields(list([planet, { ...planet, name: 'venus' }]), 'name')
    expect(applyFields(list([planet, { ...planet, name: 'venus' }]), 'name')).toEqual(first)
    expect(first).toEqual([{ name: 'mars' }, { name: 'venus' }])
  })
})
