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
}

const text = (v: unknown) => (typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v))

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
