/**
 * `GET /openapi.json`: the OpenAPI 3.1 document, generated from the routes' TypeBox schemas by
 * `@elysiajs/openapi` and then completed here, generically, for every `/api/v1` operation: security
 * (API key or bearer JWT), the problem responses every route can give, the quota headers every response
 * carries, the `X-Response-Form` header, both response forms, and the quota cost of bulk routes.
 *
 * So a domain writes only its schemas with descriptions and its route's facts (route-facts.ts
 * `routeDetail`: the response in each form, the cost of a bulk route, its body limit, its cache rule); this
 * file reads each operation's facts from the route table (route-table.ts), never from the app.
 */
import { Elysia } from 'elysia'
import type { ApiTag } from '../../domains/types.ts'
import { APP_VERSION } from '../../version.ts'
import { API_PREFIX } from '../edge/paths.ts'
import { exchangeOf } from '../edge/exchange.ts'
import type { PerItemCost, ResponseShapes } from '../routing/route-facts.ts'
import { DEFAULT_BODY_LIMIT, type RouteEntry, type RouteTable } from '../routing/route-table.ts'
import { FieldErrorSchema, ProblemEnvelopeSchema, ProblemSchema } from '../reply/schemas.ts'

export const OPENAPI_PATH = '/openapi.json'

/** Tags of routes that belong to no domain; every domain's tag comes from its descriptor. */
const SERVER_TAGS: ApiTag[] = [
  { name: 'meta', description: 'Which datasets this server answers from: versions, dates, licences and required attribution.' },
]

const OPERATIONS_TAG: ApiTag = { name: 'operations', description: 'Health, readiness, metrics and this document; no credentials.' }

type Json = Record<string, any>

const toJson = (schema: unknown): Json | undefined => (schema === undefined ? undefined : JSON.parse(JSON.stringify(schema)))

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** `quota: 'spec'`: the answer carries the SPEC's three quota headers only, at zero (no caller is known to count for). */
const PROBLEM_STATUSES: Record<string, { name: string; description: string; extraHeaders?: string[]; quota?: 'spec' }> = {
  '400': {
    name: 'BadRequest',
    description:
      'The request cannot be understood: malformed JSON, an unknown `fields` name (the problem lists the valid ones), an ambiguous value.',
  },
  '401': {
    name: 'Unauthorized',
    description:
      'Missing, invalid, expired or revoked credentials. Checked before the body is read. A caller who is not known has no credits: ' +
      '`X-Quota-Limit` and `X-Quota-Remaining` are 0 and `X-Quota-Reset` is now; the RateLimit pair, which names a plan, is not sent.',
    extraHeaders: ['WWW-Authenticate'],
    quota: 'spec',
  },
  '403': {
    name: 'Forbidden',
    description:
      "Authenticated, but not allowed here: the key's or token's scopes do not include this domain (`scopes`, `domain` members), or the " +
      'plan named is not offered.',
  },
  '404': { name: 'NotFound', description: 'No such route or resource.' },
  '405': {
    name: 'MethodNotAllowed',
    description: 'The path exists but not with this method; `Allow` lists the methods that do answer.',
    extraHeaders: ['Allow'],
  },
  '413': {
    name: 'PayloadTooLarge',
    description:
      "The request body (or a batch, or an input) is over its limit: the route's `x-body-limit` (or ALMANAC_BODY_LIMIT, if lower), " +
      'checked on Content-Length before the body is read. Costs nothing when refused before reading.',
  },
  '415': {
    name: 'UnsupportedMediaType',
    description:
      'The body is not sent as `application/json` (a form, text, or no Content-Type at all); `accepted` and `received` name the types. ' +
      'Refused before the body is read; costs nothing.',
  },
  '422': {
    name: 'UnprocessableContent',
    description:
      'Well-formed but invalid input; `errors[]` names each bad field with where it came from (`body`, `query`, `path`, `header`).',
  },
  '429': {
    name: 'QuotaExceeded',
    description:
      "The plan's credits for this window are used up (a bulk request that does not fit is refused whole and consumes " +
      'nothing). `Retry-After` says when to come back.',
    extraHeaders: ['Retry-After'],
  },
  '500': {
    name: 'InternalError',
    description: 'An unexpected failure. The body never carries a stack trace or internal message; the error is logged on the server.',
  },
  '503': {
    name: 'ServiceUnavailable',
    description: 'A dataset is not built, a dependency (quota store) is down, or the server is saturated; `Retry-After` when known.',
    extraHeaders: ['Retry-After'],
  },
}

/** Statuses every API operation documents; 413 is added to operations with a body. */
const OPERATION_PROBLEMS = ['400', '401', '403', '404', '422', '429', '500', '503']

/** The SPEC's quota headers, on every /api/v1 response; the IETF pair beside them where a plan is known. */
const SPEC_QUOTA_HEADERS = ['X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset']
const QUOTA_HEADERS = [...SPEC_QUOTA_HEADERS, 'RateLimit-Policy', 'RateLimit']

const HEADERS: Json = {
  'X-Quota-Limit': {
    description: "Credits available in the current window of the caller's plan.",
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Quota-Remaining': { description: 'Credits left in the current window after this request.', schema: { type: 'integer', minimum: 0 } },
  'X-Quota-Reset': {
    description: 'Unix time (seconds) when the current window ends and credits are restored.',
    schema: { type: 'integer' },
  },
  'RateLimit-Policy': {
    description: 'IETF RateLimit-Policy field, named after the plan: `"<plan>";q=<credits>;w=<window seconds>`.',
    schema: { type: 'string' },
  },
  RateLimit: { description: 'IETF RateLimit field: `"<plan>";r=<remaining>;t=<seconds to reset>`.', schema: { type: 'string' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'The accepted schemes: `Bearer` (JWT) and the `X-API-Key` header.', schema: { type: 'string' } },
  Allow: { description: 'Methods this path answers.', schema: { type: 'string' } },
  'X-Definitions-Updated': {
    description: 'Date of the last update of the definitions database this answer came from (reference-data domains).',
    schema: { type: 'string', format: 'date' },
  },
  ETag: {
    description: 'Strong validator of this exact answer (the datasets it came from and the representation); send it back in If-None-Match.',
    schema: { type: 'string' },
  },
  'Cache-Control': {
    description:
      "How long the answer may be reused (always `private`: answers carry the caller's quota headers); docs/operations.md lists them.",
    schema: { type: 'string' },
  },
}

/** The shared problem schemas (schemas.ts), the field error and the problem as components referenced by every error response. */
function problemSchemas(): Json {
  const problem = cleanSchema(toJson(ProblemSchema))
  problem.properties.errors.items = ref('schemas', 'FieldError')
  const envelope = cleanSchema(toJson(ProblemEnvelopeSchema))
  envelope.properties.error = ref('schemas', 'Problem')
  return { FieldError: cleanSchema(toJson(FieldErrorSchema)), Problem: problem, ProblemEnvelope: envelope }
}

const SCHEMAS: Json = {
  ...problemSchemas(),
  Envelope: {
    type: 'object',
    description: 'Form A (enveloped) success body. Lists add sibling keys such as `total`.',
    required: ['status', 'data', 'error'],
    properties: { status: { const: 'ok' }, data: { description: 'The resource, or an array of resources.' }, error: { type: 'null' } },
    additionalProperties: true,
  },
  BareList: {
    type: 'object',
    description: 'Form B (bare) list body: `{count, results}`, or `{results}` for batch results.',
    required: ['results'],
    properties: {
      count: { type: 'integer', minimum: 0, description: 'Total matches before paging.' },
      results: { type: 'array', items: {} },
    },
    additionalProperties: true,
  },
}

const problemContent = () => ({
  'application/json': {
    schema: {
      oneOf: [ref('schemas', 'Problem'), ref('schemas', 'ProblemEnvelope')],
      description: 'Form B: the problem itself; Form A: `{status: "error", data: null, error: <problem>}`.',
    },
  },
})

function responseComponents(): Json {
  const out: Json = {}
  for (const [status, p] of Object.entries(PROBLEM_STATUSES)) {
    const headers: Json = {}
    for (const h of [...(p.quota === 'spec' ? SPEC_QUOTA_HEADERS : QUOTA_HEADERS), ...(p.extraHeaders ?? [])])
      headers[h] = ref('headers', h)
    out[p.name] = { description: `${status}: ${p.description}`, headers, content: problemContent() }
  }
  return out
}

const INFO_DESCRIPTION =
  `Almanac: utility reference data over one JSON API under \`/api/v1/\`.

**Authentication.** Every \`/api/v1/\` request carries an API key in \`X-API-Key\` or a JWT in \`Authorization: Bearer\`. Health, ` +
  `readiness, metrics and these docs need none.

**Quotas.** Each plan has N credits per fixed window. A request costs 1 credit; bulk and batch routes cost 1 per item (see each route's ` +
  `\`x-quota-cost\`). Every \`/api/v1/\` response, errors included, carries \`X-Quota-Limit\`, \`X-Quota-Remaining\` and ` +
  `\`X-Quota-Reset\`, and a known caller's also \`RateLimit-Policy\` and \`RateLimit\`; without a known caller (a 401) the ` +
  `three are 0, 0 and now: no credits. Over quota: 429 with \`Retry-After\`.

**Response forms.** Form A (enveloped, \`{status, data, error}\`) or Form B (bare: the resource itself, lists as \`{count, results}\`), ` +
  `chosen by the deployment and per request with the \`X-Response-Form: enveloped|bare\` header. Each 200 response below shows both. ` +
  `The forms differ by more than the envelope, and each affected operation says how: countries (Form A \`alpha_2\`, \`alpha_3\`; ` +
  `Form B \`alpha2\`, \`alpha3\`), email risk (\`risk_score\` an integer 0-100 in Form A, a number 0-1 in Form B), a postal ` +
  `code lookup (every record of the code in Form A, the first in Form B), postal records and systems, and the IP record ` +
  `(nested in Form A, flat in Form B). \`fields\` takes the names of the form answered.

**Shared query members.** \`fields\` keeps only the named fields (dotted paths select inside objects; an unknown name is a 400 listing ` +
  `the valid ones). \`limit\`/\`offset\` page lists.

**Errors.** One RFC 9457 problem (\`type\`, \`title\`, \`status\`, \`detail\`, \`instance\`, \`errors[]\`): bare in Form B, under ` +
  `\`error\` in Form A. A method a path does not answer is a 405 with \`Allow\`; a body over the server's limit is a 413.`

const formParameter = {
  name: 'X-Response-Form',
  in: 'header',
  required: false,
  description: "Response form for this request: `enveloped` (Form A) or `bare` (Form B). Default: the deployment's.",
  schema: { type: 'string', enum: ['enveloped', 'bare'] },
}

/** Elysia documents coerced query integers as `anyOf [string "integer", integer]` and keeps its `error` texts. */
function cleanSchema(schema: any): any {
  if (Array.isArray(schema)) return schema.map(cleanSchema)
  if (!schema || typeof schema !== 'object') return schema
  if (Array.isArray(schema.anyOf)) {
    const numeric = schema.anyOf.filter(
      (s: any) => !(s?.type === 'string' && (s.format === 'integer' || s.format === 'number' || s.format === 'boolean')),
    )
    if (numeric.length === 1 && numeric.length < schema.anyOf.length) {
      const { anyOf, ...rest } = schema
      return cleanSchema({ ...rest, ...numeric[0] })
    }
  }
  const out: Json = {}
  // `error` as a string is Elysia's custom message; as an object it is a member named error (a property schema).
  for (const [k, v] of Object.entries(schema)) if (k !== 'error' || (typeof v === 'object' && v !== null)) out[k] = cleanSchema(v)
  return out
}

/** Puts a named resource schema into the components (once; a different schema under a taken name is a bug). */
function hoist(components: Json, name: string, schema: Json): Json {
  const json = JSON.stringify(schema)
  if (components[name] !== undefined && JSON.stringify(components[name]) !== json)
    throw new Error(`OpenAPI: two different schemas named ${name}`)
  components[name] = schema
  return ref('schemas', name)
}

/** The resource schemas of each form, as component references when the route names its resource. */
function resourceSchemas(shapes: ResponseShapes, components: Json): { a: Json; b: Json } {
  // Elysia's t.Integer/t.Number are coercing unions (`string "integer"` or integer): a response holds the number.
  const a = cleanSchema(toJson(shapes.enveloped) ?? {})
  const b = shapes.bare ? cleanSchema(toJson(shapes.bare)) : a
  if (!shapes.name) return { a, b }
  if (JSON.stringify(a) === JSON.stringify(b)) {
    const shared = hoist(components, shapes.name, a)
    return { a: shared, b: shared }
  }
  return {
    a: hoist(components, `${shapes.name}FormA`, { title: `${shapes.name} (Form A)`, ...a }),
    b: hoist(components, `${shapes.name}FormB`, { title: `${shapes.name} (Form B)`, ...b }),
  }
}

function successResponse(op: Json, shapes: ResponseShapes | undefined, hasDefinitions: boolean, components: Json): Json {
  const headers: Json = {}
  for (const h of QUOTA_HEADERS) headers[h] = ref('headers', h)
  if (hasDefinitions) headers['X-Definitions-Updated'] = ref('headers', 'X-Definitions-Updated')
  const existing = op.responses?.['200']
  if (existing) return { ...existing, headers: { ...headers, ...existing.headers } }
  let schema: Json
  if (!shapes) {
    schema = {
      oneOf: [
        { ...ref('schemas', 'Envelope'), title: 'Form A (enveloped)' },
        { title: 'Form B (bare)', description: 'The resource itself, or `{count, results}` for a list.' },
      ],
    }
  } else {
    const { a, b } = resourceSchemas(shapes, components)
    const listA = shapes.envelopedList ?? shapes.list
    const total = shapes.list && shapes.total !== false
    const siblings = (s?: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(s ?? {}).map(([k, v]) => [k, cleanSchema(toJson(v))]))
    const formA: Json = {
      title: 'Form A (enveloped)',
      type: 'object',
      required: ['status', 'data', 'error', ...(total ? ['total'] : []), ...Object.keys(shapes.envelopedSiblings ?? {})],
      properties: {
        status: { const: 'ok' },
        data: listA ? { type: 'array', items: a } : a,
        error: { type: 'null' },
        ...(total ? { total: { type: 'integer', minimum: 0, description: 'Total matches before paging.' } } : {}),
        ...siblings(shapes.envelopedSiblings),
      },
    }
    const formB: Json = shapes.list
      ? {
          title: 'Form B (bare)',
          type: 'object',
          required: [...(total ? ['count'] : []), 'results', ...Object.keys(shapes.bareSiblings ?? {})],
          properties: {
            ...(total ? { count: { type: 'integer', minimum: 0, description: 'Total matches before paging.' } } : {}),
            results: { type: 'array', items: b },
            ...siblings(shapes.bareSiblings),
          },
        }
      : { title: 'Form B (bare)', ...(b.$ref ? { allOf: [b] } : b) }
    schema = { oneOf: [formA, formB] }
  }
  return {
    description: "Success, in the caller's response form (Form A enveloped or Form B bare).",
    headers,
    content: { 'application/json': { schema } },
  }
}

function costText(cost: PerItemCost | undefined, free: boolean): string {
  if (free)
    return '**Quota cost:** none (`x-quota-cost: 0`): answered even when no credit is left; the quota headers still report the window.'
  if (!cost) return '**Quota cost:** 1 credit.'
  return (
    `**Quota cost:** 1 credit per item of \`${cost.field === '' ? 'the body' : cost.field}\` (at most ${cost.max} per request). ` +
    'A request whose items do not fit in the remaining credits is refused whole (429) and consumes nothing.'
  )
}

const bodyLimitText = (bytes: number) =>
  `**Body limit:** ${bytes % 1024 ? `${bytes} bytes` : `${bytes / 1024} KiB`} of \`application/json\` (\`x-body-limit\`; ` +
  `ALMANAC_BODY_LIMIT when lower). Another content type is a 415, a longer body a 413, both before the body is read.`

/** `getApiV1Timezones-diff` -> `getApiV1TimezonesDiff`, `ByTz_name` -> `ByTzName`: letters and digits only. */
const identifier = (id: string) => id.replace(/[^A-Za-z0-9]+([A-Za-z0-9]?)/g, (_, next: string) => next.toUpperCase())

/** Completes one generated `/api/v1` operation (mutates it) with the facts of its route. */
function completeOperation(op: Json, path: string, route: RouteEntry | undefined, components: Json) {
  const facts = route?.facts ?? {}
  op.security = [{ ApiKey: [] }, { BearerJWT: [] }]
  // A route of no domain (meta, a test fixture's) is put under the path segment that names it.
  op.tags = [route?.tag ?? (path.slice(API_PREFIX.length + 1).split('/')[0] || 'api')]
  const wildcard = facts.wildcard
  const tail: Json[] = wildcard
    ? [
        {
          name: wildcard.name,
          in: 'path',
          required: true,
          description: wildcard.description,
          schema: { type: 'string', minLength: 1 },
          ...(wildcard.examples
            ? { examples: Object.fromEntries(wildcard.examples.map((v) => [v.replace(/\W+/g, '_'), { value: v }])) }
            : {}),
        },
      ]
    : []
  op.parameters = [...tail, ...(op.parameters ?? []).map(cleanSchemaOfParameter), formParameter]
  // Elysia's ids keep the path's `*` and `-` (`getApiV1Timezones*`); clients turn ids into method names.
  if (typeof op.operationId === 'string')
    op.operationId = identifier(op.operationId.replace('*', wildcard ? `By_${wildcard.name}` : 'Rest'))
  if (op.requestBody?.content) {
    // Only JSON bodies are part of the API. The generator leaves the content empty when a global parse hook
    // exists (ours enforces the body limit), so the schema is taken from the route itself.
    const json = op.requestBody.content['application/json'] ?? Object.values(op.requestBody.content)[0]
    op.requestBody.content = { 'application/json': { ...json, schema: cleanSchema(json?.schema ?? toJson(route?.bodySchema)) } }
  }
  const responses: Json = { '200': successResponse(op, facts.response, route?.definitionsUpdated !== undefined, components) }
  for (const [status, r] of Object.entries(op.responses ?? {})) if (status !== '200') responses[status] = r
  for (const status of [...OPERATION_PROBLEMS, ...(op.requestBody ? ['413', '415'] : [])].sort())
    responses[status] ??= ref('responses', PROBLEM_STATUSES[status]!.name)
  if (facts.cache) {
    op['x-cache'] = facts.cache
    // Cacheable reference data: validators on the 200, and the 304 an If-None-Match that matches gets.
    responses['200'].headers = {
      ...responses['200'].headers,
      ETag: ref('headers', 'ETag'),
      'Cache-Control': ref('headers', 'Cache-Control'),
    }
    responses['304'] = {
      description:
        'Not modified: the If-None-Match validator matches. No body; the request still spends its credit and carries the quota headers.',
      headers: { ...Object.fromEntries(QUOTA_HEADERS.map((h) => [h, ref('headers', h)])), ETag: ref('headers', 'ETag') },
    }
  }
  op.responses = responses
  if (facts.cost) op['x-quota-cost'] = facts.cost
  if (facts.free) op['x-quota-cost'] = 0
  const limit = op.requestBody ? (route?.bodyLimit ?? DEFAULT_BODY_LIMIT) : undefined
  if (limit !== undefined) op['x-body-limit'] = limit
  op.description = [op.description, costText(facts.cost, facts.free === true), limit ? bodyLimitText(limit) : '']
    .filter(Boolean)
    .join('\n\n')
}

const cleanSchemaOfParameter = (p: Json) => ({ ...p, schema: cleanSchema(p.schema) })

const plain = (description: string, schema: Json) => ({ description, content: { 'application/json': { schema } } })

/** The operational endpoints, which are hidden from the generator because they are not Elysia-schema'd. */
const OPERATIONS_PATHS: Json = {
  '/healthz': {
    get: {
      tags: ['operations'],
      summary: 'Liveness: the process answers',
      operationId: 'getHealthz',
      security: [],
      responses: { '200': plain('Alive.', { type: 'object', properties: { status: { const: 'ok' } } }) },
    },
  },
  '/readyz': {
    get: {
      tags: ['operations'],
      summary: 'Readiness: every domain opened its datasets',
      operationId: 'getReadyz',
      security: [],
      responses: {
        '200': plain('Ready.', {
          type: 'object',
          properties: { status: { const: 'ready' }, domains: { type: 'array', items: { type: 'object' } } },
        }),
        '503': plain('Not ready (a dataset missing, or the server is shutting down); `problems` says why.', {
          type: 'object',
          properties: { status: { type: 'string' }, problems: { type: 'array', items: { type: 'object' } } },
        }),
      },
    },
  },
  '/metrics': {
    get: {
      tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format 0.0.4)',
      operationId: 'getMetrics',
      security: [],
      responses: {
        '200': {
          description: 'Requests by route and status, latency histogram, quota refusals, process figures.',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
      },
    },
  },
  [OPENAPI_PATH]: {
    get: {
      tags: ['operations'],
      summary: 'This OpenAPI 3.1 document',
      operationId: 'getOpenapi',
      security: [],
      responses: { '200': plain('The document.', { type: 'object' }) },
    },
  },
}

/**
 * The complete document: the one `@elysiajs/openapi` generated from the app's routes (elysia-routes.ts
 * `generatedDocument`), each `/api/v1` operation completed with the facts of its route in the route table.
 */
export function buildOpenApiDocument(generated: Json, table: RouteTable): Json {
  const normal = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p)
  const routes = new Map<string, RouteEntry>()
  for (const r of table.entries) routes.set(`${r.method.toLowerCase()} ${r.pattern.replace(/:([^/]+)/g, '{$1}')}`, r)
  const paths: Json = {}
  const resources: Json = {}
  for (const [rawPath, item] of Object.entries(generated.paths ?? {})) {
    const path = normal(rawPath)
    if (path !== API_PREFIX && !path.startsWith(API_PREFIX + '/')) continue
    for (const [method, op] of Object.entries(item as Json)) {
      const route = routes.get(`${method} ${path}`)
      const wildcard = route?.facts.wildcard
      const shown = wildcard && path.endsWith('/*') ? `${path.slice(0, -1)}{${wildcard.name}}` : path
      const target = (paths[shown] ??= {})
      if (target[method]) continue
      const operation = toJson(op)!
      completeOperation(operation, path, route, resources)
      target[method] = operation
    }
  }
  const domainTags = table.entries.flatMap((r) => (r.owner?.domain.tag ? [r.owner.domain.tag] : []))
  const descriptions = new Map([...domainTags, ...SERVER_TAGS].map((tag) => [tag.name, tag.description]))
  const tags = [...new Set(Object.values(paths).flatMap((item: Json) => Object.values(item).flatMap((op: Json) => op.tags ?? [])))].sort()
  return {
    openapi: '3.1.0',
    info: {
      title: 'Almanac API',
      version: APP_VERSION,
      description: INFO_DESCRIPTION,
      license: { name: 'MIT (code); datasets under their own licences, see GET /api/v1/meta/datasets', identifier: 'MIT' },
    },
    servers: [{ url: '/' }],
    tags: [...tags.map((name) => ({ name, description: descriptions.get(name) ?? `The ${name} domain.` })), OPERATIONS_TAG],
    security: [{ ApiKey: [] }, { BearerJWT: [] }],
    paths: { ...paths, ...OPERATIONS_PATHS },
    components: {
      securitySchemes: {
        ApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'An API key issued with `almanac keys create` or configured in `ALMANAC_API_KEYS`.',
        },
        BearerJWT: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'A JWT (HS256 by shared secret, or RS256/ES256/EdDSA by JWKS); `sub` is the quota subject.',
        },
      },
      schemas: { ...cleanSchema(generated.components?.schemas ?? {}), ...resources, ...SCHEMAS },
      responses: responseComponents(),
      headers: HEADERS,
      parameters: { ResponseForm: formParameter },
    },
  }
}

/** `GET /openapi.json`: the document `build` makes, made on the first request and kept. */
export function openApiRoutes(build: () => Json) {
  let cached: { text: string; key: string } | undefined
  return new Elysia({ name: 'almanac:openapi' }).get(
    OPENAPI_PATH,
    ({ request }) => {
      if (!cached) {
        const text = JSON.stringify(build())
        cached = { text, key: `${OPENAPI_PATH}#${Bun.hash(text).toString(36)}` }
      }
      // The same bytes every time: compressed once per document (compression.ts keys them by their hash).
      const exchange = exchangeOf(request)
      exchange.body = cached.text
      exchange.bodyKey = cached.key
      return new Response(cached.text, {
        headers: { 'content-type': 'application/json', 'cache-control': 'no-cache', vary: 'Accept-Encoding' },
      })
    },
    { detail: { hide: true } },
  )
}
