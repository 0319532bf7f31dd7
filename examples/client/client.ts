/**
 * A tiny typed client of the Almanac API: openapi-fetch over the types openapi-typescript generated from
 * the OpenAPI document (`almanac-api.ts`, see generate.ts). No casts: paths, parameters, bodies and both
 * response forms are checked by the compiler (`bun run typecheck` covers this folder).
 *
 *   ALMANAC_URL=http://127.0.0.1:8080 ALMANAC_KEY=... bun examples/client/client.ts
 */
import createClient from 'openapi-fetch'
import type { components, paths } from './almanac-api.ts'

type Schemas = components['schemas']

/** A client that asks for Form B (bare) answers. */
export function almanac(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { 'X-API-Key': apiKey, 'X-Response-Form': 'bare' } })
}
export type Almanac = ReturnType<typeof almanac>

/** Form A bodies are `{status: 'ok', data, error: null}`; the rest is Form B. Narrows without a cast. */
function isEnveloped<B extends object>(body: B): body is Extract<B, { status: 'ok'; data: unknown }> {
  return 'data' in body && 'status' in body && body.status === 'ok'
}

type Problem = Schemas['Problem']

/** An error body: Form B is the problem, Form A has it under `error`. */
type ProblemBody = Problem | { status: 'error'; error: Problem }

const problemOf = (body: ProblemBody): Problem => ('type' in body ? body : body.error)

const fail = (body: ProblemBody) => {
  const problem = problemOf(body)
  return new Error(`${problem.status} ${problem.detail}`)
}

export async function country(client: Almanac, code: string): Promise<Schemas['CountryDetailFormA'] | Schemas['CountryDetailFormB']> {
  const { data, error } = await client.GET('/api/v1/countries/{code}', { params: { path: { code } } })
  if (error) throw fail(error)
  return isEnveloped(data) ? data.data : data
}

/** The name may contain `/`: openapi-fetch percent-encodes it and the server decodes it. */
export async function timezone(client: Almanac, name: string): Promise<Schemas['TimezoneRecord']> {
  const { data, error } = await client.GET('/api/v1/timezones/{tz_name}', { params: { path: { tz_name: name } } })
  if (error) throw fail(error)
  return isEnveloped(data) ? data.data : data
}

/** Cities of several addresses; an address the server could not read comes back as its error message. */
export async function cities(client: Almanac, ips: string[]): Promise<(string | null)[]> {
  const { data, error } = await client.POST('/api/v1/ip/bulk', { body: { ips } })
  if (error) throw fail(error)
  if (isEnveloped(data)) return data.data.map((item) => ('error' in item ? item.error.message : (item.location?.city ?? null)))
  return data.results.map((item) => ('error' in item ? item.error.message : item.city))
}

/** A problem is typed too: the 422 of a bad address names the field. */
export async function whyInvalid(client: Almanac, ip: string): Promise<string[]> {
  const { error } = await client.POST('/api/v1/ip', { body: { ip } })
  if (!error) return []
  return (problemOf(error).errors ?? []).map((e) => `${e.in} ${e.field}: ${e.message}`)
}

if (import.meta.main) {
  const client = almanac(process.env.ALMANAC_URL ?? 'http://127.0.0.1:8080', process.env.ALMANAC_KEY ?? '')
  const fr = await country(client, 'FR')
  console.log(fr.name, 'alpha2' in fr ? fr.alpha2 : fr.alpha_2)
  const tz = await timezone(client, 'America/Argentina/Buenos_Aires')
  console.log(tz.timezone, tz.utc_offset)
  console.log(await cities(client, ['81.2.69.142', 'not an address']))
  console.log(await whyInvalid(client, '999.1.1.1'))
}
