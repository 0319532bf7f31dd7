/**
 * Countries speed. In-process: the service's lookups by each code form and a name search. Over HTTP:
 * GET /countries/{code} in both forms (Form A embeds the subdivisions), a subdivision, a search and a
 * validate batch, each as a ratio of a hello-world measured in the same run (target for
 * /countries/{code}: >= 0.7). Prints figures; asserts nothing.
 * Run: `bun bench/countries.ts` (after `bun src/main.ts data build --only countries`).
 */
import { openDataDir } from '../src/data/open.ts'
import { ARTIFACT } from '../src/domains/countries/build.ts'
import { openCountriesService } from '../src/domains/countries/service.ts'
import { compareWithHello, printCallsHeader, timeCalls as time } from './lib.ts'

const service = openCountriesService(openDataDir().path(ARTIFACT))

const codes = ['US', 'fr', 'DEU', '076', 'jpn', 'IN', '826', 'za']
printCallsHeader('In-process service calls')
time('country(code), mixed alpha-2/alpha-3/numeric', 200_000, (i) => service.country(codes[i % codes.length]!))
time('subdivision(US-CA)', 200_000, () => service.subdivision('US-CA'))
time('listCountries(q=united)', 50_000, () => service.listCountries({ q: 'united' }, { limit: 50, offset: 0 }))
time('allSubdivisions(GB) (224 rows, Form A detail)', 20_000, () => service.allSubdivisions('GB'))
service.close()

await compareWithHello('GET /countries/{code} over HTTP (wrk, 32 connections, 5 s each)', [
  { name: 'GET /countries/US (Form B)', path: '/api/v1/countries/US', headers: { 'x-response-form': 'bare' } },
  { name: 'GET /countries/840 (Form B)', path: '/api/v1/countries/840', headers: { 'x-response-form': 'bare' } },
  { name: 'GET /countries/US (Form A, 57 subdivisions)', path: '/api/v1/countries/US', headers: { 'x-response-form': 'enveloped' } },
  { name: 'GET /subdivisions/US-CA', path: '/api/v1/subdivisions/US-CA' },
  { name: 'GET /countries?q=united', path: '/api/v1/countries?q=united' },
  {
    name: 'POST /countries/validate (10 codes)',
    method: 'POST',
    path: '/api/v1/countries/validate',
    body: { codes: ['US', 'FR', 'DE', 'BR', 'JP', 'IN', 'GB', 'ZA', 'XX', 'YU'] },
  },
])
