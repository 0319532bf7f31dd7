/**
 * An operator serves newer detection data without a new executable: ALMANAC_UA_REGEXES names a
 * device-detector checkout (the folder holding Matomo's `regexes/*.yml`) or that `regexes/` folder.
 * Proven with a copy of Matomo's files (from the mirror, read as the upstream lays them out) to which a
 * bot was added: the bot is found, and X-Definitions-Updated is the folder's date. The older
 * node-device-detector package layout (`regexes/*.js`) is still read.
 */
import { expect, test } from 'bun:test'
import { cpSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import uaDomain from '../../../src/domains/ua/index.ts'
import { testApp } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'
import { tempDirs } from '../../support/temp.ts'

const PACKAGE = resolve(import.meta.dir, '../../../node_modules/node-device-detector')
const MATOMO_REGEXES = join(MIRROR, 'ua-regexes')

/** Puts a bot entry first in a Matomo `bots.yml` (list order: the first match wins). */
function addYamlBot(path: string, regex: string, name: string) {
  const entry =
    `- regex: '${regex}'\n  name: '${name}'\n  category: 'Crawler'\n  url: 'https://example.org/bot'\n  producer:\n    ` +
    `name: 'Almanac'\n    url: 'https://example.org'\n\n`
  const text = readFileSync(path, 'utf8')
  const first = text.search(/^- regex:/m)
  writeFileSync(path, text.slice(0, first) + entry + text.slice(first))
}
const temp = tempDirs('almanac-ua-')

function touchAll(dir: string, when: Date) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) touchAll(path, when)
    else utimesSync(path, when, when)
  }
}

test('a newer Matomo regexes folder is served in place of the built data', async () => {
  const dir = temp()
  cpSync(MATOMO_REGEXES, join(dir, 'regexes'), { recursive: true })
  addYamlBot(join(dir, 'regexes', 'bots.yml'), 'AlmanacProbeBot', 'Almanac Probe Bot')
  touchAll(dir, new Date('2027-01-02T12:00:00Z'))

  const app = await testApp({ domains: [uaDomain], env: { ALMANAC_UA_REGEXES: dir } })
  try {
    const { status, body, headers } = await app.json('POST', '/api/v1/ua', { body: { ua: 'AlmanacProbeBot/1.0' }, form: 'bare' })
    expect(status).toBe(200)
    expect(body.bot).toEqual({
      name: 'Almanac Probe Bot',
      category: 'Crawler',
      producer: 'Almanac',
      url: 'https://example.org/bot',
      producer_url: 'https://example.org',
    })
    expect(headers.get('x-definitions-updated')).toBe('2027-01-02')
    const chrome = await app.json('POST', '/api/v1/ua', {
      body: { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36' },
      form: 'bare',
    })
    expect(chrome.body.client.name).toBe('Chrome')
  } finally {
    await app.close()
  }
})

test('the older node-device-detector package layout (regexes/*.js) is still read', async () => {
  const dir = temp()
  cpSync(join(PACKAGE, 'regexes'), join(dir, 'regexes'), { recursive: true })
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'node-device-detector', version: '9.9.9' }))
  const bots = join(dir, 'regexes', 'bots.js')
  const entry = { regex: 'LegacyProbeBot', name: 'Legacy Probe Bot', category: 'Crawler', url: '', producer: { name: 'Almanac', url: '' } }
  writeFileSync(bots, readFileSync(bots, 'utf8').replace(/^(\s*module\.exports\s*=\s*\[)/, `$1\n${JSON.stringify(entry)},`))
  touchAll(dir, new Date('2027-02-03T12:00:00Z'))
  const app = await testApp({ domains: [uaDomain], env: { ALMANAC_UA_REGEXES: join(dir, 'regexes') } })
  try {
    const { body, headers } = await app.json('POST', '/api/v1/ua', { body: { ua: 'LegacyProbeBot/1' }, form: 'bare' })
    expect(body.bot.name).toBe('Legacy Probe Bot')
    expect(headers.get('x-definitions-updated')).toBe('2027-02-03')
  } finally {
    await app.close()
  }
})

test('a folder that is not detection data leaves the domain unavailable (503), not wrong', async () => {
  const app = await testApp({ domains: [uaDomain], env: { ALMANAC_UA_REGEXES: temp() } })
  try {
    const { status } = await app.json('POST', '/api/v1/ua', { body: { ua: 'curl/8' }, form: 'bare' })
    expect(status).toBe(503)
  } finally {
    await app.close()
  }
})

test('a `ua-regexes` folder dropped into the data directory is served too', async () => {
  const dataDir = temp()
  const built = resolve(import.meta.dir, '../../../datasets/out')
  // The data directory as built (its artifacts are checked against the manifest), plus the dropped folder.
  cpSync(join(built, 'manifest.json'), join(dataDir, 'manifest.json'))
  for (const a of JSON.parse(readFileSync(join(built, 'manifest.json'), 'utf8')).datasets.ua.artifacts)
    cpSync(join(built, a.name), join(dataDir, a.name))
  cpSync(MATOMO_REGEXES, join(dataDir, 'ua-regexes'), { recursive: true })
  addYamlBot(join(dataDir, 'ua-regexes', 'bots.yml'), 'DropInProbeBot', 'Drop-in Probe Bot')
  touchAll(dataDir, new Date('2027-03-04T12:00:00Z'))
  const app = await testApp({ domains: [uaDomain], env: { ALMANAC_DATA_DIR: dataDir } })
  try {
    const { body, headers } = await app.json('POST', '/api/v1/ua', { body: { ua: 'DropInProbeBot/2' }, form: 'bare' })
    expect(body.bot.name).toBe('Drop-in Probe Bot')
    expect(headers.get('x-definitions-updated')).toBe('2027-03-04')
  } finally {
    await app.close()
  }
})
