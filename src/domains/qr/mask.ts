/**
 * Mask choice, the same as npm `qrcode`'s (the same penalty rules N1-N4 as it counts them, the same tie
 * break: the lowest mask number), in typed-array loops. qrcode evaluates the eight masks through a method
 * call per module and a switch per module for the mask bit: ~4 ms of a version-40 symbol's ~5 ms. Here the
 * matrix comes from qrcode with mask 0 applied (`create(..., { maskPattern: 0 })`), is unmasked, and every
 * mask is scored on a packed copy (32 modules a word); the answer is the matrix qrcode would have made (tested bit for bit).
 */
import * as FormatInfo from 'qrcode/lib/core/format-info.js'
import type { BitMatrix } from 'qrcode/lib/core/qrcode.js'

/** ISO/IEC 18004 table 10: whether mask `p` flips module (row `i`, column `j`). */
function maskBit(p: number, i: number, j: number): number {
  switch (p) {
    case 0:
      return (i + j) % 2 === 0 ? 1 : 0
    case 1:
      return i % 2 === 0 ? 1 : 0
    case 2:
      return j % 3 === 0 ? 1 : 0
    case 3:
      return (i + j) % 3 === 0 ? 1 : 0
    case 4:
      return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0 ? 1 : 0
    case 5:
      return ((i * j) % 2) + ((i * j) % 3) === 0 ? 1 : 0
    case 6:
      return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0 ? 1 : 0
    default:
      return (((i * j) % 3) + ((i + j) % 2)) % 2 === 0 ? 1 : 0
  }
}

/**
 * A symbol packed 32 modules a word, twice: by rows and by columns (a column is a line like a row), so the
 * penalty rules run on words. Line `a` is words `a·stride + 1 … a·stride + words`; the word before each line
 * is 0, so a shift can always read the previous word. Bit `j & 31` of word `j >> 5` is module `j`.
 */
interface Packed {
  rows: Int32Array
  cols: Int32Array
}

interface Layout {
  size: number
  words: number
  stride: number
  /** Valid bits of a line's last word. */
  last: number
}

const layoutOf = (size: number): Layout => {
  const words = (size + 31) >> 5
  const tail = size - 32 * (words - 1)
  return { size, words, stride: words + 1, last: tail === 32 ? -1 : (1 << tail) - 1 }
}

function pack(modules: Uint8Array, l: Layout): Packed {
  const rows = new Int32Array(l.size * l.stride)
  const cols = new Int32Array(l.size * l.stride)
  for (let i = 0; i < l.size; i++)
    for (let j = 0; j < l.size; j++)
      if (modules[i * l.size + j]) {
        rows[i * l.stride + 1 + (j >> 5)]! |= 1 << (j & 31)
        cols[j * l.stride + 1 + (i >> 5)]! |= 1 << (i & 31)
      }
  return { rows, cols }
}

const setModule = (p: Packed, l: Layout, i: number, j: number, dark: number) => {
  const r = i * l.stride + 1 + (j >> 5)
  const c = j * l.stride + 1 + (i >> 5)
  if (dark) {
    p.rows[r]! |= 1 << (j & 31)
    p.cols[c]! |= 1 << (i & 31)
  } else {
    p.rows[r]! &= ~(1 << (j & 31))
    p.cols[c]! &= ~(1 << (i & 31))
  }
}

/**
 * Per symbol size, the eight masks (0/1 with the reserved function modules at 0, so masking is one XOR)
 * as bytes and packed. Function modules depend on the version alone, so a size has one set (about
 * 10·size² bytes: 310 KB for version 40), built on first use.
 */
const MASKS = new Map<number, { bytes: Uint8Array; packed: Packed }[]>()

function masksFor(l: Layout, reserved: Uint8Array) {
  let masks = MASKS.get(l.size)
  if (masks) return masks
  masks = []
  const n = l.size
  for (let p = 0; p < 8; p++) {
    const bytes = new Uint8Array(n * n)
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (!reserved[i * n + j]) bytes[i * n + j] = maskBit(p, i, j)
    masks.push({ bytes, packed: pack(bytes, l) })
  }
  MASKS.set(l.size, masks)
  return masks
}

/** The 15 format bits where qrcode's `setupFormatInfo` puts them (twice), and the always-dark module. */
function formatModules(size: number, bits: number, set: (i: number, j: number, dark: number) => void): void {
  for (let i = 0; i < 15; i++) {
    const dark = (bits >> i) & 1
    set(i < 6 ? i : i < 8 ? i + 1 : size - 15 + i, 8, dark)
    set(8, i < 8 ? size - i - 1 : i < 9 ? 15 - i : 15 - i - 1, dark)
  }
  set(size - 8, 8, 1)
}

const popcount = (v: number) => {
  v = v - ((v >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

/** Word `i` of a line shifted toward higher modules by `k` (1-31): its bit j is the line's module j - k. */
const shifted = (a: Int32Array, i: number, k: number) => (a[i]! << k) | (a[i - 1]! >>> (32 - k))

/** Per-line work arrays, index 0 always 0 (the word before the line). */
interface Scratch {
  /** Module j is the same as module j - 1 (never for j = 0). */
  same: Int32Array
  /** Modules j-6 … j read 1011101 (dark, light, dark ×3, light, dark): the core of a finder-like pattern. */
  core: Int32Array
  /** Modules j-3 … j are all light. */
  light4: Int32Array
}

/**
 * N1 + N3 of one line, as qrcode counts them. N1: a run of L >= 5 alike scores 3 + (L - 5), counted as the
 * modules that are the 5th or later of their run (L - 4) plus 2 at each 5th. N3: 40 for each 11-module window
 * ending at module 10 or later that reads 10111010000 or 00001011101 (qrcode's 0x5D0 and 0x05D).
 */
function lineScore(x: Int32Array, off: number, l: Layout, s: Scratch): number {
  const { same, core, light4 } = s
  const w = l.words
  for (let t = 0; t < w; t++) {
    const i = off + t
    const v = x[i]!
    const s1 = shifted(x, i, 1)
    const s2 = shifted(x, i, 2)
    const s3 = shifted(x, i, 3)
    let alike = ~(v ^ s1)
    if (t === 0) alike &= ~1
    if (t === w - 1) alike &= l.last
    same[t + 1] = alike
    core[t + 1] = v & ~s1 & s2 & s3 & shifted(x, i, 4) & ~shifted(x, i, 5) & shifted(x, i, 6)
    light4[t + 1] = ~(v | s1 | s2 | s3)
  }
  let n1 = 0
  let n3 = 0
  for (let t = 1; t <= w; t++) {
    const fifth = same[t]! & shifted(same, t, 1) & shifted(same, t, 2) & shifted(same, t, 3)
    n1 += popcount(fifth) + 2 * popcount(fifth & ~shifted(same, t, 4))
    let after = shifted(core, t, 4) & light4[t]! // 1011101 then 0000
    let before = core[t]! & shifted(light4, t, 7) // 0000 then 1011101
    if (t === 1) {
      after &= ~0x3ff
      before &= ~0x3ff
    }
    if (t === w) after &= l.last
    n3 += popcount(after) + popcount(before)
  }
  return n1 + 40 * n3
}

/** qrcode's whole penalty (mask-pattern.js getPenaltyN1 + N2 + N3 + N4) of a packed symbol. */
function penalty(p: Packed, l: Layout, s: Scratch): number {
  const { rows, cols } = p
  const n = l.size
  let score = 0
  let dark = 0
  let blocks = 0
  for (let a = 0; a < n; a++) {
    const off = a * l.stride + 1
    score += lineScore(rows, off, l, s)
    // N2: 2x2 blocks alike, from this row's `same` and how it compares with the row above.
    if (a > 0) {
      let previous = 0
      for (let t = 0; t < l.words; t++) {
        const vertical = ~(rows[off + t]! ^ rows[off - l.stride + t]!)
        blocks += popcount(vertical & ((vertical << 1) | (previous >>> 31)) & s.same[t + 1]!)
        previous = vertical
      }
    }
    for (let t = 0; t < l.words; t++) dark += popcount(rows[off + t]!)
    score += lineScore(cols, off, l, s)
  }
  const k = Math.abs(Math.ceil((dark * 100) / (n * n) / 5) - 10)
  return score + blocks * 3 + k * 10
}

/**
 * Takes a symbol qrcode made with mask 0 and gives it the mask qrcode would have chosen, format bits
 * included, in place. `level` is qrcode's error correction level object. Returns the mask number.
 */
export function remask(modules: BitMatrix, level: unknown): number {
  const { size, data, reservedBit } = modules
  const l = layoutOf(size)
  const masks = masksFor(l, reservedBit)
  const unmasked = data.slice()
  const zero = masks[0]!.bytes
  for (let i = 0; i < unmasked.length; i++) unmasked[i]! ^= zero[i]!
  const plain = pack(unmasked, l)
  const trial: Packed = { rows: new Int32Array(plain.rows.length), cols: new Int32Array(plain.cols.length) }
  const scratch: Scratch = { same: new Int32Array(l.words + 1), core: new Int32Array(l.words + 1), light4: new Int32Array(l.words + 1) }
  const setTrial = (i: number, j: number, dark: number) => setModule(trial, l, i, j, dark)
  let best = 0
  let lowest = Infinity
  for (let p = 0; p < 8; p++) {
    const mask = masks[p]!.packed
    for (let i = 0; i < trial.rows.length; i++) {
      trial.rows[i] = plain.rows[i]! ^ mask.rows[i]!
      trial.cols[i] = plain.cols[i]! ^ mask.cols[i]!
    }
    formatModules(size, FormatInfo.getEncodedBits(level, p), setTrial)
    const score = penalty(trial, l, scratch)
    if (score < lowest) {
      lowest = score
      best = p
    }
  }
  const mask = masks[best]!.bytes
  for (let i = 0; i < data.length; i++) data[i] = unmasked[i]! ^ mask[i]!
  formatModules(size, FormatInfo.getEncodedBits(level, best), (i, j, dark) => {
    data[i * size + j] = dark
  })
  return best
}
