/**
 * The seven QR routes (SPEC "QR codes"): one per preset, each its payload fields plus the common
 * parameters. A route builds the payload text (payloads.ts), and the service encodes, renders and stores
 * it. The QR result is the same object in both forms.
 */
import { Elysia, type Static, t, type TSchema } from 'elysia'
import { requestContext } from '../../http/routing/context.ts'
import { callerOf } from '../../http/edge/exchange.ts'
import { fieldsQuery } from '../../http/routing/paging.ts'
import { one } from '../../http/reply/reply.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import type { DomainContext } from '../types.ts'
import type { QrDomainState } from './state.ts'
import { publicOrigin } from './origin.ts'
import {
  emailPayload,
  geoPayload,
  LIMITS,
  smsPayload,
  textPayload,
  urlPayload,
  vcardPayload,
  wifiPayload,
  type Preset,
} from './payloads.ts'
import { commonParameters, QrResultSchema } from './schemas.ts'
import type { QrOptions } from './service.ts'

const str = (description: string, maxLength: number, minLength = 0, examples?: string[]) =>
  t.String({ description, maxLength, ...(minLength ? { minLength } : {}), ...(examples ? { examples } : {}) })

interface PresetRoute {
  preset: Preset
  summary: string
  description: string
  fields: Record<string, TSchema>
  /** The payload text; `warn` adds a warning to the answer (a request read in a documented way). */
  build(body: any, warn: (warning: string) => void): string
  /** The body member a capacity overflow is reported against. */
  field(body: any): string
}

/** The longest string member: where the bytes of a composite payload come from. */
const longest = (names: string[]) => (body: Record<string, unknown>) =>
  names.reduce((best, n) => (String(body[n] ?? '').length > String(body[best] ?? '').length ? n : best), names[0]!)

const PHONE_NOTE = 'Digits with an optional leading +, spaces, dots, dashes and parentheses; at most 20 digits.'

const ROUTES: PresetRoute[] = [
  {
    preset: 'text',
    summary: 'QR code of plain text',
    description: 'Encodes `text` verbatim as UTF-8 (numeric and alphanumeric runs in their denser modes).',
    fields: {
      text: str(
        `The text, 1-${LIMITS.text} characters (UTF-16 code units). 4296 fit only for alphanumeric text at level L; the real limit is ` +
          `the level's capacity (a 422 states it).`,
        LIMITS.text,
        1,
        ['Hello, world'],
      ),
    },
    build: textPayload,
    field: () => 'text',
  },
  {
    preset: 'url',
    summary: 'QR code of a URL',
    description:
      'Encodes `url` verbatim: an absolute URL with a scheme (https:, http:, or any other such as otpauth:), no spaces or control ' +
      'characters.',
    fields: { url: str(`Absolute URL, at most ${LIMITS.url} characters.`, LIMITS.url, 1, ['https://example.com/']) },
    build: (body) => urlPayload(body),
    field: () => 'url',
  },
  {
    preset: 'wifi',
    summary: 'QR code that joins a WiFi network',
    description:
      'Encodes `WIFI:T:<WPA|WEP|nopass>;S:<ssid>;P:<password>;H:<true|false>;;`, with `\\ ; , : "` in the SSID and password escaped by a ' +
      'backslash; `P:` is left out for nopass. ' +
      'With neither `encryption` nor `password` the network is encoded as open (`T:nopass`) and a warning says so; `encryption: WPA` ' +
      'without a password is a 422.',
    fields: {
      ssid: str(`Network name, 1-${LIMITS.ssid} characters and at most 32 bytes of UTF-8.`, LIMITS.ssid, 1, ['Home']),
      password: t.Optional(
        str(
          `Passphrase or key, at most ${LIMITS.password} characters: WPA needs ${LIMITS.wpaMin}-${LIMITS.password}, WEP one, nopass ` +
            `none. Optional: without it (and without encryption) the network is encoded as open, with a warning.`,
          LIMITS.password,
          0,
          ['correct horse battery'],
        ),
      ),
      encryption: t.Optional(
        // No default, and no UnionEnum (Elysia fills one in with its first value): the payload must see
        // whether an encryption was given.
        t.Union([t.Literal('WPA'), t.Literal('WEP'), t.Literal('nopass')], {
          description:
            'WPA (WPA/WPA2/WPA3 personal, the default when a password is given), WEP or nopass (open network, the default without a ' +
            'password).',
          error: 'encryption: expected WPA, WEP or nopass',
        }),
      ),
      hidden: t.Optional(t.Boolean({ default: false, description: 'The network does not broadcast its SSID.' })),
    },
    build: wifiPayload,
    field: longest(['ssid', 'password']),
  },
  {
    preset: 'vcard',
    summary: 'QR code of a contact (vCard 3.0)',
    description:
      'Encodes a vCard 3.0: `BEGIN:VCARD`, `VERSION:3.0`, `N` (the name split at its last space: family name last), `FN`, ' +
      'then `ORG`, `TEL`, `EMAIL`, `ADR` (the address as its street component), `URL` when given, `END:VCARD`. ' +
      'Lines end in CRLF; `\\ , ;` and newlines in text values are escaped (RFC 6350); lines are folded at 75 octets.',
    fields: {
      name: str(`Full name, 1-${LIMITS.name} characters.`, LIMITS.name, 1, ['Ada Lovelace']),
      phone: t.Optional(str(`Telephone number. ${PHONE_NOTE}`, LIMITS.phone, 1, ['+44 20 7946 0000'])),
      email: t.Optional(str('Email address.', LIMITS.email, 1, ['ada@example.com'])),
      org: t.Optional(str('Organisation.', LIMITS.org)),
      address: t.Optional(str('Postal address, one text (newlines allowed).', LIMITS.address)),
      url: t.Optional(str('Web address: an absolute URL.', LIMITS.url)),
    },
    build: vcardPayload,
    field: longest(['name', 'org', 'address', 'url', 'email', 'phone']),
  },
  {
    preset: 'email',
    summary: 'QR code that starts an email',
    description:
      'Encodes a `mailto:` URI (RFC 6068): `mailto:<to>?subject=...&body=...`, the subject and body percent-encoded as UTF-8 (space as ' +
      '%20, line breaks as %0D%0A).',
    fields: {
      to: str('Recipient: one email address.', LIMITS.email, 3, ['ada@example.com']),
      subject: t.Optional(str(`Subject, at most ${LIMITS.subject} characters.`, LIMITS.subject)),
      body: t.Optional(str(`Message body, at most ${LIMITS.body} characters.`, LIMITS.body)),
    },
    build: emailPayload,
    field: longest(['body', 'subject', 'to']),
  },
  {
    preset: 'sms',
    summary: 'QR code that starts a text message',
    description: 'Encodes `SMSTO:<phone>:<message>`. The format has no escaping: the message is verbatim (colons included).',
    fields: {
      phone: str(`Recipient. ${PHONE_NOTE}`, LIMITS.phone, 1, ['+15555550100']),
      message: t.Optional(str(`Message, at most ${LIMITS.sms} characters.`, LIMITS.sms)),
    },
    build: smsPayload,
    field: () => 'message',
  },
  {
    preset: 'geo',
    summary: 'QR code of a location',
    description: 'Encodes a `geo:<latitude>,<longitude>` URI (RFC 5870, WGS-84) in plain decimal, at most 7 decimals.',
    fields: {
      latitude: t.Number({
        minimum: -90,
        maximum: 90,
        description: 'Latitude in degrees, -90 to 90.',
        examples: [48.8584],
        error: 'latitude: expected a number from -90 to 90',
      }),
      longitude: t.Number({
        minimum: -180,
        maximum: 180,
        description: 'Longitude in degrees, -180 to 180.',
        examples: [2.2945],
        error: 'longitude: expected a number from -180 to 180',
      }),
    },
    build: geoPayload,
    field: () => 'latitude',
  },
]

const COMMON_NOTE =
  'png and svg are stored (content-addressed: the same image is stored once) and answered with a signed `url` that works ' +
  'until `expires`; base64 answers the PNG inline in `data_uri`. ' +
  'A payload over the capacity of the chosen error_correction level is a 422 stating the capacity (`capacity` member). ' +
  "Each stored image counts against the caller's share of the image store until its link expires: over it, a 429 with Retry-After saying " +
  "when the caller's own links free room; a full or unwritable image store is a 503."

/** The options of the body, passed on only when given (the service fills in its defaults). */
const OPTION_NAMES = Object.keys(commonParameters) as (keyof QrOptions)[]

/** The document's example request of a preset: its fields' own examples, as a base64 image (nothing stored). */
const exampleBody = (fields: Record<string, { examples?: unknown[] }>) => ({
  ...Object.fromEntries(Object.entries(fields).flatMap(([name, schema]) => (schema.examples?.length ? [[name, schema.examples[0]]] : []))),
  format: 'base64',
})

export function qrRoutes({ service: state, config }: DomainContext<QrDomainState>) {
  const { service, trusted } = state
  const app = new Elysia({ prefix: '/qr' }).use(requestContext(config.responseForm))
  for (const route of ROUTES) {
    app.post(
      '/' + route.preset,
      async ({ body, request, server }) => {
        const b = body as Record<string, any>
        const warnings: string[] = []
        const payload = route.build(b, (w) => warnings.push(w))
        const options: QrOptions = {}
        for (const name of OPTION_NAMES) if (b[name] !== undefined) (options as any)[name] = b[name]
        const origin = publicOrigin(request, server?.requestIP(request)?.address, trusted, config.qr.publicUrl)
        // The service's result is the response in both forms (no presenter): held to the schema the route declares.
        const result: Static<typeof QrResultSchema> = await service.generate(
          route.preset,
          payload,
          route.field(b),
          options,
          origin,
          callerOf(request),
          warnings,
        )
        return one(result)
      },
      {
        body: t.Object({ ...route.fields, ...commonParameters }, { examples: [exampleBody(route.fields)] }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: route.summary,
          // The largest payload (text: 4,296 characters) at 3 bytes each is 13 KB; 6 each as \u escapes, 26 KB.
          bodyLimit: 64 * 1024,
          description: `${route.description} ${COMMON_NOTE}`,
          response: { enveloped: QrResultSchema, bare: QrResultSchema },
        }),
      },
    )
  }
  return app
}
