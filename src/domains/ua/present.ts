/**
 * Canonical parse result -> the SPEC's two forms ("User-agent parse result"): Form A carries `is_bot`
 * and `ua_only`; Form B the four objects. Both add `tampered` (SPEC rule 2, a field the SPEC leaves
 * unnamed). Also the device-catalog entry: a WURFL-style capability map (docs/ua.md names each source).
 */
import { type Static, t } from 'elysia'
import type { ResponseForm } from '../../config.ts'
import { itemError } from '../../http/reply/schemas.ts'
import { isItemError, type ItemError, type Parse, type UaResult } from './service.ts'

export function enveloped(r: UaResult): Static<typeof EnvelopedSchema> {
  return { is_bot: r.is_bot, client: r.client, os: r.os, device: r.device, bot: r.bot, ua_only: r.ua_only, tampered: r.tampered }
}

export function bare(r: UaResult): Static<typeof BareSchema> {
  return { client: r.client, os: r.os, device: r.device, bot: r.bot, tampered: r.tampered }
}

export const present = (r: UaResult, form: ResponseForm) => (form === 'enveloped' ? enveloped(r) : bare(r))

export const presentItem = (
  r: (UaResult & { ua: string }) | ItemError,
  form: ResponseForm,
): Static<typeof BulkEnvelopedItem> | Static<typeof BulkBareItem> => (isItemError(r) ? r : { ua: r.ua, ...present(r, form) })

/** Device types counted as mobile by WURFL's `is_mobile` (a wireless, handheld device). */
const MOBILE = new Set(['smartphone', 'feature phone', 'phablet', 'tablet', 'wearable', 'portable media player', 'camera'])
/** Device types whose models all have a touch screen. */
const TOUCH = new Set(['smartphone', 'phablet', 'tablet', 'wearable', 'smart display'])
/** Device types known to have none (remote, pad or keyboard). */
const NO_TOUCH = new Set(['tv', 'console', 'smart speaker', 'feature phone'])

const FORM_FACTOR = new Map<string, string>([
  ['desktop', 'Desktop'],
  ['smartphone', 'Smartphone'],
  ['phablet', 'Smartphone'],
  ['tablet', 'Tablet'],
  ['feature phone', 'Feature Phone'],
  ['tv', 'Smart-TV'],
  ['wearable', 'Other Mobile'],
  ['portable media player', 'Other Mobile'],
  ['camera', 'Other Mobile'],
])

/** The WURFL-style capability map of one parse (`touch`: the UA carries a Windows `Touch` token). */
export function catalogEntry(r: Parse & { is_bot: boolean }, touch: boolean): Static<typeof CatalogEntrySchema> {
  const type = r.device?.type ?? ''
  return {
    is_mobile: MOBILE.has(type),
    is_tablet: type === 'tablet',
    is_smarttv: type === 'tv',
    is_bot: r.is_bot,
    is_touchscreen: TOUCH.has(type) || touch ? true : NO_TOUCH.has(type) ? false : null,
    brand_name: r.device?.brand ?? '',
    model_name: r.device?.model ?? '',
    device_os: r.os?.name ?? '',
    device_os_version: r.os?.version ?? '',
    advertised_browser: r.client?.name ?? '',
    advertised_browser_version: r.client?.version ?? '',
    form_factor: r.is_bot && !r.client ? 'Robot' : (FORM_FACTOR.get(type) ?? 'Other non-Mobile'),
  }
}

// ---- schemas (OpenAPI) ----

const s = (description: string) => t.String({ description })

export const ClientSchema = t.Union(
  [
    t.Object({
      type: s("Matomo's client type: browser, mobile app, library, mediaplayer, feed reader or pim."),
      name: s('Client name (e.g. Chrome Mobile, Telegram, curl).'),
      version: s('Client version; from the Client Hints when they give it; may be empty.'),
      engine: s('Rendering engine of a browser (Blink, WebKit, Gecko, …); empty for other clients.'),
      engine_version: s('Engine version; may be empty.'),
    }),
    t.Null(),
  ],
  { description: 'The client; null for a bot (except a headless browser, which keeps its client) or when none is recognised.' },
)

export const OsSchema = t.Union(
  [
    t.Object({
      name: s('Operating system (Android, iOS, Windows, Mac, GNU/Linux, …).'),
      version: s('Version; Windows 11 from Sec-CH-UA-Platform-Version 13 and up; may be empty.'),
      platform: s('Architecture label: x64, x86, ARM, MIPS, SuperH, SPARC, LoongArch64 or empty.'),
    }),
    t.Null(),
  ],
  { description: 'The operating system; null for a bot or when none is recognised.' },
)

export const DeviceSchema = t.Union(
  [
    t.Object({
      type: s(
        "Matomo's device type: desktop, smartphone, tablet, phablet, feature phone, console, tv, car browser, smart display, camera, " +
          'portable media player, wearable, smart speaker, peripheral; empty when unknown.',
      ),
      brand: s('Brand (Samsung, Apple, …); may be empty.'),
      model: s('Marketing model name (Galaxy S21, iPhone, …); may be empty.'),
    }),
    t.Null(),
  ],
  { description: 'The device; null for a bot or when nothing about it is known.' },
)

export const BotSchema = t.Union(
  [
    t.Object({
      name: s('Bot name (Googlebot, GPTBot, ClaudeBot, Headless Chrome, …).'),
      category: s("Matomo's category (Search bot, Crawler, Site Monitor, …); `Headless browser` for headless browsers."),
      producer: s('Who runs it; may be empty.'),
      url: s('Page about the bot; may be empty.'),
      producer_url: s("The producer's site; may be empty."),
    }),
    t.Null(),
  ],
  { description: 'The bot; null when not a bot.' },
)

const tampered = t.Boolean({
  description:
    "The hints' client major version differs from the one in the UA alone (a sign of a tampered User-Agent). False without hints.",
})

export const UaOnlySchema = t.Union([t.Object({ client: ClientSchema, os: OsSchema, device: DeviceSchema }), t.Null()], {
  description: 'The parse of the UA string alone; null when no Client Hints were supplied.',
})

export const EnvelopedSchema = t.Object({
  is_bot: t.Boolean({ description: 'True for crawlers, monitors, libraries flagged as bots, and headless browsers.' }),
  client: ClientSchema,
  os: OsSchema,
  device: DeviceSchema,
  bot: BotSchema,
  ua_only: UaOnlySchema,
  tampered,
})

export const BareSchema = t.Object({ client: ClientSchema, os: OsSchema, device: DeviceSchema, bot: BotSchema, tampered })

const UaItemError = itemError('ua', t.Unknown({ description: 'The item as sent (its `ua` member, or null).' }))
const item = (schema: typeof EnvelopedSchema | typeof BareSchema) =>
  t.Union([t.Composite([t.Object({ ua: s('The input user agent.') }), schema]), UaItemError])
export const BulkEnvelopedItem = item(EnvelopedSchema)
export const BulkBareItem = item(BareSchema)

export const CatalogEntrySchema = t.Object({
  is_mobile: t.Boolean({
    description: 'Device type smartphone, feature phone, phablet, tablet, wearable, portable media player or camera.',
  }),
  is_tablet: t.Boolean({ description: 'Device type tablet.' }),
  is_smarttv: t.Boolean({ description: 'Device type tv.' }),
  is_bot: t.Boolean({ description: 'As `is_bot` of the parse result.' }),
  is_touchscreen: t.Union([t.Boolean(), t.Null()], {
    description:
      'True for smartphone, phablet, tablet, wearable, smart display, or a Windows `Touch` token; false for tv, console, smart ' +
      'speaker, feature phone; null when unknown.',
  }),
  brand_name: s('device.brand, or empty.'),
  model_name: s('device.model, or empty.'),
  device_os: s('os.name, or empty.'),
  device_os_version: s('os.version, or empty.'),
  advertised_browser: s('client.name (a browser, app or library), or empty.'),
  advertised_browser_version: s('client.version, or empty.'),
  form_factor: s('Desktop, Smartphone, Tablet, Feature Phone, Smart-TV, Robot, Other Mobile or Other non-Mobile (from device.type).'),
})

export const CatalogSchema = t.Record(t.String(), CatalogEntrySchema, {
  description: 'One capability map per distinct input string, keyed by it.',
})
