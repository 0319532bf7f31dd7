/**
 * The vendored node-device-detector engine (src/vendor/node-device-detector, MIT, patches in its PATCHES.md)
 * over a set of detection data, with its answers mapped to the canonical model of service.ts. The data and
 * our compiled, prefiltered regexes (prefilter.ts) are handed to the engine as constructor options: its
 * parsers take their collections as they are built, each keeps its own.
 */
import type { Definitions } from './definitions.ts'
import type { Bot, Client, Device, Os } from './parse.ts'
import * as prefilter from './prefilter.ts'
import DeviceDetector from '../../vendor/node-device-detector/index.js'
import ClientHints from '../../vendor/node-device-detector/client-hints.js'

export interface Detector {
  detect(ua: string, headers: Record<string, string> | undefined): { client: Client | null; os: Os | null; device: Device | null }
  bot(ua: string): Bot | null
  /** Matomo's touch token (`Touch` as a word), as the engine tests it for Windows tablets. */
  touch(ua: string): boolean
  /**
   * Every list index a parse may ask for, one function each (the vendored parsers' `indexes`): a brand's
   * models and a system's versions are otherwise indexed by the first user agent that reaches them, and the
   * literal table packed again for them a few hundred parses later (25-60 ms on that request's turn).
   */
  indexes(): (() => void)[]
}

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v))

/**
 * Parsed once after the detector opens (UaService.warmUp): a desktop, a Mac, an iPhone, an Android phone, a
 * tablet, a TV, a browser on Linux, a bot and a library. The engine builds each parser's list index and brings
 * in its own fixed patterns on first use, and the literal table packs when they have come (prefilter.ts):
 * done by the first requests, that was 75 ms for the first parse and a 70-80 ms repack a few hundred parses
 * later, each blocking the event loop for everyone.
 */
export const WARM_UP = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 Edg/120.0.0.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (SMART-TV; Linux; Tizen 7.0) AppleWebKit/537.36 (KHTML, like Gecko) 94.0.4606.31/7.0 TV Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'curl/8.5.0',
]

export function createDetector(defs: Definitions): Detector {
  prefilter.seedLiterals(defs.literals)
  const engine = new DeviceDetector({
    collections: defs.collections,
    matchers: prefilter,
    deviceIndexes: false,
    clientIndexes: false,
    osIndexes: false,
    deviceAliasCode: false,
    deviceInfo: false,
    deviceTrusted: false,
  })
  const hintsParser = new ClientHints()
  return {
    detect(ua, headers) {
      const r: any = engine.detect(ua, headers ? hintsParser.parse(headers, {}) : {})
      const c = r.client ?? {}
      const o = r.os ?? {}
      const d = r.device ?? {}
      return {
        client: c.name
          ? {
              type: text(c.type),
              name: text(c.name),
              version: text(c.version),
              engine: text(c.engine),
              engine_version: text(c.engine_version),
            }
          : null,
        os: o.name ? { name: text(o.name), version: text(o.version), platform: text(o.platform) } : null,
        device: d.type || d.brand || d.model ? { type: text(d.type), brand: text(d.brand), model: text(d.model) } : null,
      }
    },
    touch: (ua) => prefilter.userAgentMatcher('Touch').test(ua),
    indexes: () => engine.indexes(),
    bot(ua) {
      const b: any = engine.parseBot(ua)
      if (!b?.name) return null
      return {
        name: text(b.name),
        category: text(b.category),
        producer: text(b.producer?.name),
        url: text(b.url),
        producer_url: text(b.producer?.url),
      }
    },
  }
}
