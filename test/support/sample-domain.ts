/**
 * A tiny domain over an in-memory table, used to exercise the shared HTTP layers (forms, fields, paging,
 * quota cost, problems) independently of any real domain's data.
 */
import { Elysia, t } from 'elysia'
import { requestContext } from '../../src/http/routing/context.ts'
import { routeDetail } from '../../src/http/routing/route-facts.ts'
import { fieldsQuery, pageOf, pageQuery } from '../../src/http/routing/paging.ts'
import { list, one } from '../../src/http/reply/reply.ts'
import { notFound } from '../../src/lib/errors.ts'
import { defineDomain } from '../../src/domains/types.ts'

export const PLANETS = ['mercury', 'venus', 'earth', 'mars', 'jupiter', 'saturn', 'uranus', 'neptune'].map((name, i) => ({
  name,
  order: i + 1,
  orbit: { days: [88, 225, 365, 687, 4333, 10759, 30687, 60190][i]!, moons: [0, 0, 1, 2, 95, 146, 28, 16][i]! },
}))

const present = (p: (typeof PLANETS)[number], form: 'enveloped' | 'bare') =>
  form === 'enveloped' ? { planet_name: p.name, order: p.order, orbit: p.orbit } : { name: p.name, order: p.order, orbit: p.orbit }

export const sampleDomain = (definitions = '2026-01-02') =>
  defineDomain({
    name: 'planets',
    prefixes: ['/planets'],
    datasets: [],
    open: () => PLANETS,
    definitionsUpdated: () => definitions,
    routes: ({ config }) =>
      new Elysia({ prefix: '/planets' })
        .use(requestContext(config.responseForm))
        .get(
          '/',
          ({ query, form }) => {
            const page = pageOf(query)
            return list(
              PLANETS.slice(page.offset, page.offset + page.limit).map((p) => present(p, form)),
              { total: PLANETS.length },
            )
          },
          { query: t.Object({ ...pageQuery(config.maxLimit), ...fieldsQuery }) },
        )
        .get(
          '/:name',
          ({ params, form }) => {
            const p = PLANETS.find((x) => x.name === params.name.toLowerCase())
            if (!p) throw notFound(`No planet named ${params.name}.`)
            return one(present(p, form))
          },
          { query: t.Object(fieldsQuery) },
        )
        .post(
          '/bulk',
          ({ body, form }) =>
            list(
              body.names
                .map((n) => PLANETS.find((x) => x.name === n))
                .filter((p) => !!p)
                .map((p) => present(p!, form)),
            ),
          {
            body: t.Object({ names: t.Array(t.String(), { minItems: 1, maxItems: 5 }) }),
            detail: routeDetail({ summary: 'Several planets', cost: { field: 'names', max: 5 } }),
          },
        ),
  })

/** A domain whose dataset is missing: it is disabled at start, and every request to it is a 503 (its credit given back). */
export const brokenDomain = () =>
  defineDomain({
    name: 'broken',
    prefixes: ['/broken'],
    datasets: ['no-such-dataset'],
    open: () => null,
    routes: () => {
      throw new Error('never mounted: its dataset is missing')
    },
  })
