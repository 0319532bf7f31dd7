/**
 * Dataset age and the stale flag (issue 18) in /api/v1/meta/datasets and /readyz, on the real manifest
 * with a fixed clock: GeoLite2 (dataset ip) is stale past 30 days after its upstream date, not before.
 */
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { type TestApp, testApp } from '../support/app.ts'

const manifest = JSON.parse(readFileSync(resolve(import.meta.dir, '../../datasets/out/manifest.json'), 'utf8'))
const DAY = 86_400_000
const upstream = Date.parse(`${manifest.datasets.ip.date}T00:00:00Z`)

async function at(now: number, run: (app: TestApp) => Promise<void>) {
  const app = await testApp({ clock: () => now })
  try {
    await run(app)
  } finally {
    await app.close()
  }
}

test.each([
  [30, false],
  [31, true],
])('GeoLite2 %i days after its upstream date: stale %p', async (days, stale) => {
  await at(upstream + days * DAY + 3_600_000, async (app) => {
    const meta = await app.json('GET', '/api/v1/meta/datasets/ip', { form: 'bare' })
    expect(meta.status).toBe(200)
    expect(meta.body).toMatchObject({ age_days: days, stale, stale_after_days: 30 })

    const ready = await app.json('GET', '/readyz')
    const entry = ready.body.datasets.find((d: { dataset: string }) => d.dataset === 'ip')
    expect(entry).toEqual({ dataset: 'ip', age_days: days, stale, stale_after_days: 30 })
    // Stale data still answers: readiness does not depend on age.
    expect(ready.status).toBe(200)
  })
})

test('datasets without a threshold are never stale; every dataset of the manifest is reported', async () => {
  await at(upstream + 3650 * DAY, async (app) => {
    const list = await app.json('GET', '/api/v1/meta/datasets', { form: 'bare' })
    const countries = list.body.results.find((d: { id: string }) => d.id === 'countries')
    expect(countries).toMatchObject({ stale: false, stale_after_days: null })
    expect(countries.age_days).toBe(Math.floor((upstream + 3650 * DAY - Date.parse(`${manifest.datasets.countries.date}T00:00:00Z`)) / DAY))
    const ready = await app.json('GET', '/readyz')
    expect(ready.body.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(Object.keys(manifest.datasets).sort())
  })
})
