/**
 * `GET /api/v1/meta/datasets[/:id]`: which datasets this server answers from — version, upstream date,
 * build date, counts — with each source's licence and the credit lines that CC BY, ODbL and the MaxMind
 * GeoLite2 EULA require to be shown. Authenticated and counted like every /api/v1 route.
 */
import { Elysia, type Static, t } from 'elysia'
import { APP_VERSION } from '../../version.ts'
import type { Config } from '../../config.ts'
import { dayOf, freshness, type StaleAfterDays } from '../../data/freshness.ts'
import { openingProblem } from '../../data/opening.ts'
import { provenance } from '../../data/provenance.ts'
import type { DataDir } from '../../data/types.ts'
import { notFound } from '../../lib/errors.ts'
import { redactPaths } from '../../lib/redact.ts'
import { type MountedDomain, type ServedEntry, servedEntry } from '../../domains/types.ts'
import { requestContext } from '../routing/context.ts'
import { fieldsQuery } from '../routing/paging.ts'
import { list, one } from '../reply/reply.ts'
import { routeDetail } from '../routing/route-facts.ts'
import { nullable } from '../reply/schemas.ts'

const text = (description: string) => nullable(t.String(), description)

/** A dataset as the two meta routes answer it (the same in both forms). */
export const DatasetSchema = t.Object({
  id: t.String({ examples: ['countries'] }),
  domain: text('Domain that serves it; null for a dataset no mounted domain uses.'),
  status: t.Union([t.Literal('open'), t.Literal('unavailable'), t.Literal('missing')], {
    description: '`open`: served; `unavailable`: built but its domain failed to open; `missing`: not built.',
  }),
  version: text('Version of the data (upstream release or build).'),
  date: text('Date of the upstream data, YYYY-MM-DD.'),
  built: text('When this server built it, ISO 8601.'),
  license: text('Licences of the data, as one line.'),
  attribution: t.Array(t.String(), { description: 'Credit lines the licences require to be shown.' }),
  sources: t.Array(
    t.Object({
      id: t.String(),
      version: t.String(),
      date: t.String(),
      license: t.String(),
      attribution: t.String(),
      duties: t.Optional(t.String({ description: 'What the licence asks of whoever shows the data.' })),
      url: t.Optional(t.String()),
      homepage: t.Optional(t.String()),
      origin: t.Optional(
        t.String({
          description:
            "Who supplied the source when the build did not: `operator-supplied (ALMANAC_IP_CITY_MMDB)` for the operator's own City " +
            "database, whose licence is the operator's.",
        }),
      ),
      database: t.Optional(
        t.Object(
          {
            type: t.String({ description: 'Its `database_type`, e.g. `GeoIP2-City`.', examples: ['GeoIP2-City'] }),
            build_epoch: t.Integer({ description: 'Its `build_epoch`: when MaxMind (or its publisher) built it, Unix seconds.' }),
            built: t.String({ description: 'The same instant, ISO 8601.' }),
            languages: t.Array(t.String(), { description: 'Its `languages`: the languages it has names in.' }),
            description: nullable(t.String(), 'Its `description` (in English when it has one).'),
          },
          { description: "What a MaxMind DB file's metadata says of it (the operator's own database)." },
        ),
      ),
    }),
  ),
  counts: t.Record(t.String(), t.Integer(), { description: 'Records by kind, e.g. `{"countries": 249}`.' }),
  age_days: nullable(t.Integer({ minimum: 0 }), 'Whole days since the upstream date of its newest source; null when unknown.'),
  stale: t.Boolean({ description: 'Older than stale_after_days: refresh it (docs/datasets.md, "Freshness"; GeoLite2: 30 days).' }),
  stale_after_days: nullable(t.Integer({ minimum: 1 }), 'Age in days past which the dataset is stale; null: never stale.'),
  unavailable_sources: t.Optional(
    t.Array(t.Object({ id: t.String(), reason: t.String() }), {
      description: 'Optional sources the dataset was built without; the domain serves, with the signals they give marked unavailable.',
    }),
  ),
  problem: t.Optional(t.String({ description: 'Why the dataset is not served (status other than open).' })),
  served_from: t.Optional(
    t.String({
      description:
        'Set when part of the dataset is served from something other than its built artifacts: `operator-supplied ' +
        "(ALMANAC_IP_CITY_MMDB)` when the operator's own City database answers in place of the bundled GeoLite2 City. Its source " +
        "is then in `sources` (with `origin` and `database`), and `version`, `date`, `age_days` and `stale` are its build date's.",
    }),
  ),
})

/** A dataset's description, as the schema above is the contract of it. */
export type DatasetInfo = Static<typeof DatasetSchema>

function info(
  id: string,
  entry: ServedEntry | undefined,
  mounted: MountedDomain | undefined,
  now: number,
  limits: StaleAfterDays,
): DatasetInfo {
  // What the open domain serves, where it is not what the manifest says (an operator's own database).
  if (entry && mounted) entry = servedEntry(entry, [mounted])
  const sources = (entry?.sources ?? []).map(({ id, version, date, license, attribution, duties, url, homepage, origin, database }) => ({
    id,
    version,
    date,
    license,
    attribution,
    ...(duties ? { duties } : {}),
    ...(url ? { url } : {}),
    ...(homepage ? { homepage } : {}),
    ...(origin ? { origin } : {}),
    ...(database ? { database } : {}),
  }))
  const problem = mounted?.state === 'opening' ? openingProblem(mounted.domain) : mounted?.problem
  const status = !entry ? 'missing' : problem ? 'unavailable' : 'open'
  const declared = provenance(sources)
  return {
    id,
    domain: mounted?.domain.name ?? null,
    status,
    version: entry?.version ?? null,
    date: entry?.date ?? declared.date,
    built: entry?.built ?? null,
    license: entry?.license ?? declared.license,
    attribution: entry?.attribution ?? declared.attribution,
    sources,
    counts: entry?.counts ?? {},
    ...freshness(id, entry, now, limits),
    ...(entry?.unavailable?.length
      ? { unavailable_sources: entry.unavailable.map((u) => ({ id: u.id, reason: redactPaths(u.reason) })) }
      : {}),
    ...(status !== 'open' && problem ? { problem } : {}),
    ...(entry?.served_from ? { served_from: entry.served_from } : {}),
  }
}

/** Every dataset a domain declares or the manifest holds, in domain order then by id. */
export function datasetInfos(data: DataDir, mounted: MountedDomain[], limits: StaleAfterDays, now: number = Date.now()): DatasetInfo[] {
  const out: DatasetInfo[] = []
  const seen = new Set<string>()
  for (const m of mounted) {
    for (const id of m.domain.datasets) {
      if (seen.has(id)) continue
      seen.add(id)
      out.push(info(id, data.manifest.datasets[id], m, now, limits))
    }
  }
  for (const id of Object.keys(data.manifest.datasets).sort())
    if (!seen.has(id)) out.push(info(id, data.manifest.datasets[id], undefined, now, limits))
  return out
}

const appVersion = t.String({ description: 'Version of this server.' })

export const metaRoutes = (
  config: Config,
  data: DataDir,
  mounted: MountedDomain[],
  limits: StaleAfterDays,
  clock: () => number = Date.now,
) => {
  // Made again only when a domain's state changed (the integrity check may disable one while serving) or
  // the day did (ages are in whole days).
  const problems = () => mounted.map((m) => m.problem ?? '').join('\0')
  let infos = datasetInfos(data, mounted, limits, clock())
  let state = problems()
  let day = dayOf(clock())
  const current = () => {
    const now = clock()
    const next = problems()
    if (next !== state || dayOf(now) !== day) [infos, state, day] = [datasetInfos(data, mounted, limits, now), next, dayOf(now)]
    return infos
  }
  return new Elysia({ name: 'almanac:meta', prefix: '/meta' })
    .use(requestContext(config.responseForm))
    .get(
      '/datasets',
      () => {
        const infos = current()
        return list(infos, {
          total: infos.length,
          enveloped: { app_version: APP_VERSION },
          bare: { app_version: APP_VERSION },
          stable: true,
        })
      },
      {
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: 'Datasets, their versions, licences and required attribution',
          response: {
            name: 'Dataset',
            enveloped: DatasetSchema,
            list: true,
            envelopedSiblings: { app_version: appVersion },
            bareSiblings: { app_version: appVersion },
          },
        }),
      },
    )
    .get(
      '/datasets/:id',
      ({ params }) => {
        const infos = current()
        const found = infos.find((d) => d.id === params.id)
        if (!found) throw notFound(`No dataset ${JSON.stringify(params.id)}; known: ${infos.map((d) => d.id).join(', ') || 'none'}.`)
        return one(found, { stable: true })
      },
      {
        params: t.Object({ id: t.String({ description: 'Dataset id, as listed by GET /api/v1/meta/datasets.', examples: ['timezones'] }) }),
        query: t.Object(fieldsQuery),
        detail: routeDetail({
          summary: 'One dataset: version, licence and required attribution',
          response: { name: 'Dataset', enveloped: DatasetSchema },
        }),
      },
    )
}
