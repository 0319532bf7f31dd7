/**
 * The operator API's own OpenAPI document (`GET /admin/openapi.json`): generated from the admin routes'
 * schemas (the same generator as the public document), limited to `/admin/v1`, with the operator credential
 * as its one security scheme. Kept apart from /openapi.json so a customer's client never sees it.
 */
import { Elysia } from 'elysia'
import { APP_VERSION } from '../version.ts'
import { generatedDocument } from '../http/routing/elysia-routes.ts'
import { ProblemSchema } from '../http/reply/schemas.ts'
import { ADMIN_PREFIX, type adminRoutes } from './routes.ts'

type Json = Record<string, any>

const DESCRIPTION = `The operator API of an Almanac server: API keys, customers, plans, the usage ledger, the audit log,
datasets and metrics. Authenticate with an operator credential (ALMANAC_ADMIN_TOKENS, \`name:token\`) as
\`Authorization: Bearer <token>\`; a customer's API key is never accepted. Changes are recorded in the audit log
under \`admin:<name>\`. Failures are RFC 9457 problems. The console at /console uses this API.`

const PROBLEM = { description: 'A problem (RFC 9457).', content: { 'application/problem+json': { schema: ProblemSchema } } }

/** The document for the admin routes `admin` declares. */
export function adminDocument(admin: ReturnType<typeof adminRoutes>): Json {
  const generated = generatedDocument(new Elysia().use(admin))
  const paths: Json = {}
  for (const [path, item] of Object.entries<Json>(generated.paths ?? {})) {
    if (!path.startsWith(ADMIN_PREFIX)) continue
    for (const op of Object.values<Json>(item)) {
      op.security = [{ operator: [] }]
      op.responses = { ...op.responses, 401: PROBLEM, 404: PROBLEM, 409: PROBLEM, 422: PROBLEM }
    }
    paths[path] = item
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Almanac operator API', version: APP_VERSION, description: DESCRIPTION },
    servers: [{ url: '/' }],
    paths,
    components: {
      ...generated.components,
      securitySchemes: { operator: { type: 'http', scheme: 'bearer', description: 'ALMANAC_ADMIN_TOKENS' } },
    },
    tags: ['keys', 'customers', 'plans', 'usage', 'audit', 'operator'].map((name) => ({ name })),
  }
}

/** `GET /admin/openapi.json`: public like /openapi.json (it describes, it grants nothing). */
export const adminDocumentRoute = (document: () => Json) =>
  new Elysia({ name: 'almanac:admin-openapi' }).get(
    '/admin/openapi.json',
    ({ set }) => {
      set.headers['cache-control'] = 'no-cache'
      return document()
    },
    { detail: { hide: true } },
  )
