/** GenerationalCache keeps at most its entries and its bytes, and keeps the newest. */
import { expect, test } from 'bun:test'
import { Doorkeeper, GenerationalCache } from '../../src/lib/cache.ts'

test('bounded in entries and in bytes; recent entries survive, the oldest go', () => {
  const byEntries = new GenerationalCache<string, number>(20, 1 << 21, (k) => k.length * 2)
  for (let i = 0; i < 1000; i++) byEntries.set(`ua${i}`, i)
  expect(byEntries.stats().entries).toBeLessThanOrEqual(20)
  expect(byEntries.get('ua999')).toBe(999)
  expect(byEntries.get('ua0')).toBeUndefined()
  const byBytes = new GenerationalCache<string, number>(2_000_000, 20_000, (k) => k.length * 2)
  for (let i = 0; i < 1000; i++) byBytes.set(`${i}`.padEnd(2000, 'x'), i)
  expect(byBytes.stats().bytes).toBeLessThanOrEqual(20_000)
  // An entry heavier than half the budget is not kept at all.
  byBytes.set('y'.repeat(6000), 1)
  expect(byBytes.get('y'.repeat(6000))).toBeUndefined()
})

test('Doorkeeper: a key is new once, then asked before; a full table forgets it', () => {
  const keeper = new Doorkeeper(4) // 16 slots
  expect(keeper.askedBefore('a')).toBe(false)
  expect(keeper.askedBefore('a')).toBe(true)
  expect(keeper.askedBefore('b')).toBe(false)
  expect(keeper.askedBefore('b')).toBe(true)
  // 200 other keys through 16 slots: 'a' has lost its slot, and is new again.
  for (let i = 0; i < 200; i++) keeper.askedBefore(`other-${i}`)
  expect(keeper.askedBefore('a')).toBe(false)
})
