/**
 * What one parse finds (SPEC "User-agent parse result"): declared apart from the service, so the engine
 * adapter (engine.ts) that fills them and the service that calls the engine do not import each other.
 */
export interface Client {
  /** Matomo's client type: browser, mobile app, library, mediaplayer, feed reader, pim. */
  type: string
  name: string
  version: string
  engine: string
  engine_version: string
}

export interface Os {
  name: string
  version: string
  /** Architecture label (x64, x86, ARM, MIPS …) or ''. */
  platform: string
}

export interface Device {
  /** Matomo's device type (desktop, smartphone, tablet, …) or '' when unknown. */
  type: string
  brand: string
  model: string
}

export interface Bot {
  name: string
  category: string
  producer: string
  url: string
  producer_url: string
}

export interface Parse {
  client: Client | null
  os: Os | null
  device: Device | null
  bot: Bot | null
}
