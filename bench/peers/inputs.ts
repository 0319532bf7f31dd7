/**
 * Inputs of bench/peers.ts, all from public data on this machine and seeded, so every run sends the same
 * sets: uap-core's test user agents (Debian package uap-core), random texts for QR, random public IPv4
 * addresses, and a word list of varied frequency counted over the KJV verses of datasets/out/bible.sqlite.
 */
import { existsSync, readFileSync } from 'node:fs'
import { openReadonlySqlite } from '../../src/data/sqlite.ts'
import { BIBLE_ARTIFACT } from '../../src/domains/bible/artifacts.ts'
import { formatV4, type IpAddress, parseIp } from '../../src/lib/ip-address.ts'
import { reservedKind } from '../../src/lib/ip-reserved.ts'
import { ROOT } from '../lib.ts'

/** mulberry32: a small seeded generator, so the input sets are the same from run to run. */
export function seeded(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Distinct `user_agent_string` values of uap-core's test_ua.yaml (single- or double-quoted YAML), as bench/ua.ts reads them. */
export function uapCoreAgents(): string[] {
  const path = '/usr/share/uap-core/tests/test_ua.yaml'
  if (!existsSync(path)) throw new Error(`${path} is missing: install the Debian package uap-core`)
  const out = new Set<string>()
  for (const m of readFileSync(path, 'utf8').matchAll(/user_agent_string: *(['"])(.*)\1\s*$/gm))
    out.add(m[1] === "'" ? m[2]!.replace(/''/g, "'") : JSON.parse(`"${m[2]}"`))
  return [...out].filter((ua) => ua.trim() !== '' && ua.length <= 2048)
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:/-_?=&'
/** `count` texts of 20–200 random characters (URL-ish alphabet). */
export function qrTexts(count: number, random = seeded(24)): string[] {
  return Array.from({ length: count }, () => {
    const n = 20 + Math.floor(random() * 181)
    let s = ''
    for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(random() * ALPHABET.length)]
    return s.trim().length ? s : `x${s}`
  })
}

/** `count` distinct random public IPv4 addresses (special-purpose ranges excluded). */
export function publicV4(count: number, random = seeded(4)): string[] {
  const seen = new Set<string>()
  while (seen.size < count) {
    const text = formatV4(Math.floor(random() * 2 ** 32) >>> 0)
    if (!reservedKind(parseIp(text) as IpAddress)) seen.add(text)
  }
  return [...seen]
}

export interface Verse {
  /** Reference, e.g. "John 3:16". */
  r: string
  b: number
  c: number
  v: number
  t: string
}

/** The KJV verses, read-only from the built database, with their English references. */
export function kjvVerses(): Verse[] {
  const db = openReadonlySqlite(`${ROOT}/datasets/out/${BIBLE_ARTIFACT}`)
  try {
    const kjv = db
      .query<{ idx: number; first_id: number; last_id: number }, []>(`SELECT idx, first_id, last_id FROM translations WHERE id = 'kjv'`)
      .get()!
    return db
      .query<{ name: string; book: number; chapter: number; verse: number; text: string }, [number, number, number]>(
        `SELECT b.local_name AS name, v.book, v.chapter, v.verse, v.text FROM verses v
         JOIN books b ON b.translation = ? AND b.book = v.book WHERE v.id BETWEEN ? AND ? ORDER BY v.id`,
      )
      .all(kjv.idx, kjv.first_id, kjv.last_id)
      .map((x) => ({ r: `${x.name} ${x.chapter}:${x.verse}`, b: x.book, c: x.chapter, v: x.verse, t: x.text }))
  } finally {
    db.close()
  }
}

/**
 * Search words by frequency over the KJV (verses containing each word): `rare` has 64 words with 1–10
 * hits; `mixed` 212 queries (those 64, 64 words with 11–100 hits, 40 with 101–3,000, 44 two-word queries
 * whose words share a verse).
 */
export function searchQueries(verses: Verse[], random = seeded(7)) {
  const wordsOf = (t: string) => [
    ...new Set(
      t
        .toLowerCase()
        .split(/[^\p{L}]+/u)
        .filter((w) => w.length >= 3),
    ),
  ]
  const hits = new Map<string, number>()
  for (const v of verses) for (const w of wordsOf(v.t)) hits.set(w, (hits.get(w) ?? 0) + 1)
  const words = [...hits.keys()].sort()
  const pick = (min: number, max: number, count: number) => {
    const pool = words.filter((w) => hits.get(w)! >= min && hits.get(w)! <= max)
    const out = new Set<string>()
    while (out.size < Math.min(count, pool.length)) out.add(pool[Math.floor(random() * pool.length)]!)
    return [...out]
  }
  const rare = pick(1, 10, 64)
  const pairs = new Set<string>()
  while (pairs.size < 44) {
    const ws = wordsOf(verses[Math.floor(random() * verses.length)]!.t).filter((w) => w.length >= 4)
    if (ws.length < 2) continue
    const a = ws[Math.floor(random() * ws.length)]!
    const b = ws[Math.floor(random() * ws.length)]!
    if (a !== b) pairs.add(`${a} ${b}`)
  }
  return { rare, mixed: [...rare, ...pick(11, 100, 64), ...pick(101, 3000, 40), ...pairs], hits }
}
