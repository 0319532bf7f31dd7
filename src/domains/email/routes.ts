/** The two email risk endpoints of the SPEC: POST /email/risk and POST /email/risk/bulk. */
import { Elysia, t } from 'elysia'
import type { DomainContext } from '../types.ts'
import { requestContext } from '../../http/routing/context.ts'
import { callerOf } from '../../http/edge/exchange.ts'
import { fieldsQuery } from '../../http/routing/paging.ts'
import { list, one } from '../../http/reply/reply.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import type { ReadinessWarnings } from '../../http/endpoints/readiness.ts'
import { BareItemSchema, BareSchema, EnvelopedItemSchema, EnvelopedSchema, present, presentItem } from './present.ts'
import { MAX_INPUT, type EmailService } from './service.ts'

export const BULK_MAX = 10

/** What the domain's `open` returns; /readyz reads its warnings (the DNS resolver's state). */
export interface EmailDomainState extends ReadinessWarnings {
  service: EmailService
  /** Removes the SIGHUP listener that reloads the operator lists. */
  stopReloading: () => void
}

/** How the result differs between the forms: the same name on two scales, said where callers read the route. */
const EMAIL_FORMS =
  'The forms differ: Form A `risk_score` is an integer 0-100 with `risk_tier` and the checks nested under `checks`; ' +
  "Form B `risk_score` is a number 0-1 (Form A's / 100) with `risk_level` and flat booleans (`valid_syntax`, " +
  '`domain_exists`, `disposable`, `free_provider`).'

const address = t.String({
  maxLength: MAX_INPUT,
  description:
    `An email address (RFC 5321 mailbox, RFC 6531 UTF-8 and IDN accepted). Invalid syntax is not an error: it scores 100 ` +
    `(critical). At most ${MAX_INPUT} characters.`,
  examples: ['someone@example.com'],
})

export const emailRoutes = ({ service: state, config }: DomainContext<EmailDomainState>) => {
  const { service } = state
  return new Elysia({ prefix: '/email' })
    .use(requestContext(config.responseForm))
    .post('/risk', async ({ body, form, request }) => one(present(await service.assess(body.email, callerOf(request)), form)), {
      body: t.Object({ email: address }, { examples: [{ email: 'someone@mailinator.com' }] }),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        summary: 'Score one email address (0-100)',
        description:
          'Syntax, MX (DNS), domain age (RDAP), disposable, free-provider and abuse lists. `fields` accepts dotted paths such ' +
          'as `checks.disposable`. A check that cannot be performed is reported in `unknown_checks` and adds no points; the answer ' +
          `comes within the DNS and RDAP timeouts. ${EMAIL_FORMS}`,
        response: { enveloped: EnvelopedSchema, bare: BareSchema },
      }),
    })
    .post(
      '/risk/bulk',
      async ({ body, form, request }) => {
        const items = (await service.bulk(body.emails, callerOf(request), 'emails')).map((a) => presentItem(a, form))
        return list(items, { enveloped: { total: items.length } })
      },
      {
        body: t.Object(
          {
            emails: t.Array(
              // Unknown, checked per item by the service (SPEC rule 5): a bad item is answered in its place.
              t.Unknown({
                description:
                  `An email address, as the body of POST /email/risk. An item that is not a string of at most ${MAX_INPUT} ` +
                  `characters is answered in its place as {email, error: {field, message}}; the others are scored.`,
                examples: ['someone@example.com'],
              }),
              {
                minItems: 1,
                maxItems: BULK_MAX,
                description:
                  `1 to ${BULK_MAX} addresses, assessed concurrently and independently; each costs one quota credit, a bad ` + `item too.`,
              },
            ),
          },
          { examples: [{ emails: ['someone@mailinator.com', 'not an address'] }] },
        ),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: `Score up to ${BULK_MAX} email addresses`,
          description: `Form A: \`{status, total, data}\`; Form B: \`{results}\`. Each address costs one quota credit. ${EMAIL_FORMS}`,
          cost: { field: 'emails', max: BULK_MAX },
          // 10 addresses of 1,024 characters, 3 bytes each at most: 30.8 KB.
          bodyLimit: 64 * 1024,
          response: {
            enveloped: EnvelopedItemSchema,
            bare: BareItemSchema,
            list: true,
            total: false,
            envelopedSiblings: { total: t.Integer({ minimum: 0 }) },
          },
        }),
      },
    )
}
