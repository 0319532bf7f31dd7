/**
 * Reads GeoIP2/GeoLite2 City (or Country) records, decoding only what the IP record needs: English
 * names, codes, the location block and the postal code. Everything else (other languages, geoname ids,
 * traits) is skipped without being built. Decoded records are cached per data-section offset — many
 * networks share one record, and the shared parts (country, continent, subdivisions, cities) are
 * pointers in the file, cached per pointer target — so a lookup is a tree walk plus a Map hit.
 */
import { GenerationalCache } from '../../lib/cache.ts'
import type { MmdbReader } from './mmdb.ts'

/** Shared by every record of the country, frozen, in Form A's member order (the response uses it as is). */
export interface Country {
  readonly name: string | null
  readonly iso_code: string | null
  readonly is_in_european_union: boolean
}

/**
 * The country a military base or embassy network represents (MaxMind `represented_country`): shared and
 * frozen like Country, with MaxMind's `type` (e.g. `military`).
 */
export interface RepresentedCountry extends Country {
  readonly type: string | null
}

/** Shared and frozen like Country. */
export interface Continent {
  readonly name: string | null
  readonly code: string | null
}

interface Subdivision {
  iso_code: string | null
  name: string | null
}

/** The location half of an IP record, shared by every address of one network. */
export interface Place {
  country: Country | null
  /** Where the network is registered (its ISP's country), which may differ from where it is used. */
  registered_country: Country | null
  represented_country: RepresentedCountry | null
  continent: Continent | null
  city: string | null
  region: string | null
  region_code: string | null
  postal_code: string | null
  latitude: number | null
  longitude: number | null
  accuracy_radius: number | null
  time_zone: string | null
}

const KEY_NAMES = [
  'city',
  'continent',
  'country',
  'location',
  'postal',
  'subdivisions',
  'names',
  'en',
  'iso_code',
  'code',
  'is_in_european_union',
  'latitude',
  'longitude',
  'accuracy_radius',
  'time_zone',
  'registered_country',
  'represented_country',
  'type',
] as const
const K = Object.fromEntries(KEY_NAMES.map((k, i) => [k, i])) as Record<(typeof KEY_NAMES)[number], number>

/** Candidate keys by byte length: [code, bytes][]. */
const BY_LENGTH: [number, Uint8Array][][] = []
for (const [i, name] of KEY_NAMES.entries()) (BY_LENGTH[name.length] ??= []).push([i, new TextEncoder().encode(name)])

/** Most decoded records kept; past it the older generation is dropped (two-generation LRU). */
const RECORD_CACHE_SIZE = 200_000

export class CityReader {
  private readonly r: MmdbReader
  private readonly places = new GenerationalCache<number, Place>(RECORD_CACHE_SIZE)
  private readonly countries = new Map<number, Country | null>()
  private readonly represented = new Map<number, RepresentedCountry | null>()
  private readonly continents = new Map<number, Continent | null>()
  private readonly subdivisions = new Map<number, Subdivision | null>()
  private readonly cities = new Map<number, string | null>()

  constructor(readonly reader: MmdbReader) {
    this.r = reader
  }

  /** The place of an IPv4 address (u32), or null when the database has none. */
  findV4(ip: number): Place | null {
    const offset = this.r.findV4(ip)
    return offset ? this.placeAt(offset) : null
  }

  findV6(words: ArrayLike<number>): Place | null {
    const offset = this.r.findV6(words)
    return offset ? this.placeAt(offset) : null
  }

  placeAt(offset: number): Place {
    let place = this.places.get(offset)
    if (place === undefined) {
      place = this.decodePlace(offset)
      this.places.set(offset, place)
    }
    return place
  }

  /** Reads the key at `pos` (a string, or a pointer to one) and returns its code, or -1 if not needed. */
  private key(): number {
    const r = this.r
    const b = r.buf
    let ctrl = b[r.pos]!
    let after = -1
    if (ctrl >> 5 === 1) {
      r.pos++
      const target = r.pointer(ctrl)
      after = r.pos
      r.pos = target
      ctrl = b[target]!
    }
    let size = ctrl & 0x1f
    let p = r.pos + 1
    if (size >= 29) {
      if (size === 29) size = 29 + b[p++]!
      else {
        size = 285 + ((b[p]! << 8) | b[p + 1]!)
        p += 2
      }
    }
    let code = -1
    const candidates = BY_LENGTH[size]
    if (candidates) {
      for (const [c, bytes] of candidates) {
        let same = true
        for (let i = 0; i < size; i++)
          if (b[p + i] !== bytes[i]) {
            same = false
            break
          }
        if (same) {
          code = c
          break
        }
      }
    }
    r.pos = after >= 0 ? after : p + size
    return code
  }

  /**
   * Positions at the container (map or array) at `pos`, following a pointer; returns its size and
   * the pointer target (or -1 when inline). `pos` is left at the first entry; `after` is where the
   * caller resumes when the value was a pointer.
   */
  private container(): { size: number; target: number; after: number; type: number } {
    const r = this.r
    const ctrl = r.buf[r.pos]!
    let target = -1
    let after = -1
    if (ctrl >> 5 === 1) {
      r.pos++
      target = r.pointer(ctrl)
      after = r.pos
      r.pos = target
    }
    const { type, size } = r.header()
    return { size, target, after, type }
  }

  /** A value shared through a pointer is decoded once per target offset. */
  private shared<T>(cache: Map<number, T>, decode: (size: number, type: number) => T): T {
    const r = this.r
    const ctrl = r.buf[r.pos]!
    if (ctrl >> 5 === 1) {
      r.pos++
      const target = r.pointer(ctrl)
      const after = r.pos
      let value = cache.get(target)
      if (value === undefined) {
        r.pos = target
        const { type, size } = r.header()
        value = decode(size, type)
        cache.set(target, value)
      }
      r.pos = after
      return value
    }
    const { type, size } = r.header()
    return decode(size, type)
  }

  private string(): string | null {
    const r = this.r
    if (r.atPointer()) return r.pointed(() => this.string())
    const { type, size } = r.header()
    if (type !== 2) {
      this.skipBody(type, size)
      return null
    }
    const p = r.pos
    r.pos = p + size
    return r.buf.utf8Slice(p, p + size)
  }

  private number(): number | null {
    const r = this.r
    if (r.atPointer()) return r.pointed(() => this.number())
    const { type, size } = r.header()
    const p = r.pos
    switch (type) {
      case 3:
        r.pos = p + 8
        return r.buf.readDoubleBE(p)
      case 15:
        r.pos = p + 4
        return r.buf.readFloatBE(p)
      case 5:
      case 6:
      case 9:
      case 8:
        r.pos = p + size
        return size <= 6 ? r.uint(p, size) : null
      default:
        this.skipBody(type, size)
        return null
    }
  }

  private boolean(): boolean {
    const r = this.r
    if (r.atPointer()) return r.pointed(() => this.boolean())
    const { type, size } = r.header()
    if (type === 14) return size !== 0
    this.skipBody(type, size)
    return false
  }

  /** Skips the body of a value whose header was already read. */
  private skipBody(type: number, size: number) {
    const r = this.r
    if (type === 7) for (let i = 0; i < size * 2; i++) r.skip()
    else if (type === 11) for (let i = 0; i < size; i++) r.skip()
    else if (type === 3) r.pos += 8
    else if (type === 15) r.pos += 4
    else if (type !== 14) r.pos += size
  }

  /** `names` map -> the English name. */
  private englishName(): string | null {
    const { size, after, type } = this.container()
    let name: string | null = null
    if (type === 7) {
      for (let i = 0; i < size; i++) {
        if (this.key() === K.en) name = this.string()
        else this.r.skip()
      }
    } else this.skipBody(type, size)
    if (after >= 0) this.r.pos = after
    return name
  }

  private countryBody = (size: number, type: number): Country | null => {
    if (type !== 7) return (this.skipBody(type, size), null)
    const c: { -readonly [k in keyof Country]: Country[k] } = { name: null, iso_code: null, is_in_european_union: false }
    for (let i = 0; i < size; i++) {
      const k = this.key()
      if (k === K.iso_code) c.iso_code = this.string()
      else if (k === K.names) c.name = this.englishName()
      else if (k === K.is_in_european_union) c.is_in_european_union = this.boolean()
      else this.r.skip()
    }
    return Object.freeze(c)
  }

  private representedBody = (size: number, type: number): RepresentedCountry | null => {
    if (type !== 7) return (this.skipBody(type, size), null)
    const c: { -readonly [k in keyof RepresentedCountry]: RepresentedCountry[k] } = {
      name: null,
      iso_code: null,
      is_in_european_union: false,
      type: null,
    }
    for (let i = 0; i < size; i++) {
      const k = this.key()
      if (k === K.iso_code) c.iso_code = this.string()
      else if (k === K.names) c.name = this.englishName()
      else if (k === K.is_in_european_union) c.is_in_european_union = this.boolean()
      else if (k === K.type) c.type = this.string()
      else this.r.skip()
    }
    return Object.freeze(c)
  }

  private continentBody = (size: number, type: number): Continent | null => {
    if (type !== 7) return (this.skipBody(type, size), null)
    const c: { -readonly [k in keyof Continent]: Continent[k] } = { name: null, code: null }
    for (let i = 0; i < size; i++) {
      const k = this.key()
      if (k === K.code) c.code = this.string()
      else if (k === K.names) c.name = this.englishName()
      else this.r.skip()
    }
    return Object.freeze(c)
  }

  private subdivisionBody = (size: number, type: number): Subdivision | null => {
    if (type !== 7) return (this.skipBody(type, size), null)
    const s: Subdivision = { iso_code: null, name: null }
    for (let i = 0; i < size; i++) {
      const k = this.key()
      if (k === K.iso_code) s.iso_code = this.string()
      else if (k === K.names) s.name = this.englishName()
      else this.r.skip()
    }
    return s
  }

  private cityBody = (size: number, type: number): string | null => {
    if (type !== 7) return (this.skipBody(type, size), null)
    let name: string | null = null
    for (let i = 0; i < size; i++) {
      if (this.key() === K.names) name = this.englishName()
      else this.r.skip()
    }
    return name
  }

  /** The first (largest) subdivision of the `subdivisions` array. */
  private firstSubdivision(): Subdivision | null {
    const { size, after, type } = this.container()
    let first: Subdivision | null = null
    if (type === 11) {
      for (let i = 0; i < size; i++) {
        if (i === 0) first = this.shared(this.subdivisions, this.subdivisionBody)
        else this.r.skip()
      }
    } else this.skipBody(type, size)
    if (after >= 0) this.r.pos = after
    return first
  }

  private location(place: Place) {
    const { size, after, type } = this.container()
    if (type === 7) {
      for (let i = 0; i < size; i++) {
        const k = this.key()
        if (k === K.latitude) place.latitude = this.number()
        else if (k === K.longitude) place.longitude = this.number()
        else if (k === K.accuracy_radius) place.accuracy_radius = this.number()
        else if (k === K.time_zone) place.time_zone = this.string()
        else this.r.skip()
      }
    } else this.skipBody(type, size)
    if (after >= 0) this.r.pos = after
  }

  private postal(place: Place) {
    const { size, after, type } = this.container()
    if (type === 7) {
      for (let i = 0; i < size; i++) {
        if (this.key() === K.code) place.postal_code = this.string()
        else this.r.skip()
      }
    } else this.skipBody(type, size)
    if (after >= 0) this.r.pos = after
  }

  private decodePlace(offset: number): Place {
    const r = this.r
    r.pos = offset
    const place: Place = {
      country: null,
      registered_country: null,
      represented_country: null,
      continent: null,
      city: null,
      region: null,
      region_code: null,
      postal_code: null,
      latitude: null,
      longitude: null,
      accuracy_radius: null,
      time_zone: null,
    }
    const { size, after, type } = this.container()
    if (type !== 7) return place
    for (let i = 0; i < size; i++) {
      const k = this.key()
      if (k === K.country) place.country = this.shared(this.countries, this.countryBody)
      else if (k === K.registered_country) place.registered_country = this.shared(this.countries, this.countryBody)
      else if (k === K.represented_country) place.represented_country = this.shared(this.represented, this.representedBody)
      else if (k === K.continent) place.continent = this.shared(this.continents, this.continentBody)
      else if (k === K.city) place.city = this.shared(this.cities, this.cityBody)
      else if (k === K.subdivisions) {
        const s = this.firstSubdivision()
        place.region = s?.name ?? null
        place.region_code = s?.iso_code ?? null
      } else if (k === K.location) this.location(place)
      else if (k === K.postal) this.postal(place)
      else r.skip()
    }
    if (after >= 0) r.pos = after
    return place
  }
}
