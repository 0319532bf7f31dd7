/**
 * The built lists against their upstream files (the oracle), the allowlist, the matching rules, the
 * in-process speed floor's companion (no allocation-heavy path is needed to be right), and the operator
 * allow/deny files, read at start and again on SIGHUP.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { getDomain } from 'tldts'
import { BUILTIN_ALLOW } from '../../../src/domains/email/allowlist.ts'
import { normalizeListEntry } from '../../../src/domains/email/artifacts.ts'
import { mailcheckerDomains } from '../../../src/domains/email/build.ts'
import { buildDomainTable, maskOf } from '../../../src/domains/email/domain-table.ts'
import emailDomainDefault from '../../../src/domains/email/index.ts'
import { openEmailService, type EmailService } from '../../../src/domains/email/service.ts'
import { openDataDir } from '../../../src/data/open.ts'
import { testApp, testConfig } from '../../support/app.ts'
import { MIRROR } from '../../support/mirror.ts'
import { rng } from '../../support/random.ts'
import { signalled } from '../../support/signals.ts'
import { tempDirs } from '../../support/temp.ts'

const ROOT = join(import.meta.dir, '../../..')
const tempDir = tempDirs('almanac-email-lists-')
const mailchecker = mailcheckerDomains(readFileSync(join(ROOT, 'node_modules/mailchecker/platform/node/index.js'), 'utf8'))
const burner = readFileSync(join(ROOT, 'node_modules/burner-email-providers/emails.txt'), 'utf8')
  .split('\n')
  .map((s) => s.trim())
  .filter(Boolean)
const free = JSON.parse(readFileSync(join(ROOT, 'node_modules/free-email-domains/domains.json'), 'utf8')) as string[]
const abuse = readFileSync(join(MIRROR, 'email/abuse-domains-blocklistproject-2026-07-20.txt'), 'utf8').split('\n').filter(Boolean)

let service: EmailService
beforeAll(() => {
  service = openEmailService(testConfig({ ALMANAC_EMAIL_OFFLINE: '1', ALMANAC_STATE_DIR: tempDir() }), openDataDir())
})
afterAll(() => service.close())

const allowed = (d: string) => BUILTIN_ALLOW.some((a) => d === a || d.endsWith('.' + a))

test('every upstream disposable domain is found (minus the allowlist), on a sample of 2,000 per list', () => {
  const pick = rng(15)
  for (const list of [mailchecker, burner]) {
    for (let i = 0; i < 2000; i++) {
      const raw = list[Math.floor(pick() * list.length)]!
      const d = normalizeListEntry(raw)
      if (!d) continue
      expect({ d, disposable: service.listCheck(d).disposable }).toEqual({ d, disposable: !allowed(d) })
    }
  }
})

test('every abuse-list domain is listed, naming the list with its date', () => {
  const pick = rng(7)
  for (let i = 0; i < 2000; i++) {
    const d = abuse[Math.floor(pick() * abuse.length)]!
    expect(service.listCheck(d).abuse).toBe(true)
  }
  expect(abuse.length).toBe(198_720)
  expect(service.abuseListDate).toBe('2026-07-20')
})

test('free providers minus disposable ones; the big providers and forwarding services are never disposable', () => {
  expect(service.listCheck('gmail.com')).toMatchObject({ free: true, disposable: false })
  for (const d of [
    'outlook.com',
    'yahoo.com',
    'icloud.com',
    'privaterelay.appleid.com',
    'mozmail.com',
    'duck.com',
    'simplelogin.com',
    'passmail.net',
  ]) {
    expect({ d, disposable: service.listCheck(d).disposable }).toEqual({ d, disposable: false })
  }
  // A free-list entry that a disposable list also holds is disposable, not free.
  const both = free.find((d) => mailchecker.includes(d) && !allowed(d))!
  expect(service.listCheck(both)).toMatchObject({ disposable: true, free: false })
})

test('matching: subdomains for disposable, the exact name for free, name or registrable domain for abuse', () => {
  expect(service.listCheck('a.b.mailinator.com')).toMatchObject({ disposable: true, disposableMatch: 'mailinator.com' })
  expect(service.listCheck('mail.gmail.com').free).toBe(false)
  const twoLabel = abuse.find((d) => /^[a-z0-9-]+\.com$/.test(d))!
  expect(service.listCheck(`mx.${twoLabel}`).abuse).toBe(true)
  // A listed subdomain does not list its parent.
  expect(abuse).toContain('00004563.000webhostapp.com')
  expect(abuse).not.toContain('000webhostapp.com')
  expect(service.listCheck('000webhostapp.com').abuse).toBe(false)
  expect(service.listCheck('nothing-here-at-all.example').disposable).toBe(false)
})

test('a listed name below a registrable domain is found from deeper hosts, and does not list its parent', () => {
  const all = new Set([...mailchecker, ...burner].map((d) => normalizeListEntry(d)).filter((d): d is string => !!d))
  const deep = [...all].find((d) => {
    const reg = getDomain(d)
    return reg && reg !== d && !all.has(reg) && !allowed(d) && d.split('.').length >= 3
  })!
  expect(deep).toBeString()
  expect(service.listCheck(`a.b.${deep}`)).toMatchObject({ disposable: true, disposableMatch: deep })
  expect(service.listCheck(deep)).toMatchObject({ disposable: true, disposableMatch: deep })
  expect(service.listCheck(getDomain(deep)!).disposable).toBe(false)
})

test('the domain table finds every name it holds and nothing else', () => {
  const names = new Map(Array.from({ length: 5000 }, (_, i) => [`n${i}.example${i % 7}.com`, (i % 31) + 1] as const))
  const t = buildDomainTable(names)
  for (const [n, m] of names) expect(maskOf(t, n)).toBe(m)
  for (let i = 5000; i < 6000; i++) expect(maskOf(t, `n${i}.example${i % 7}.com`)).toBe(0)
  expect(maskOf(t, 'x.n1.example1.com', 2)).toBe(names.get('n1.example1.com')!)
  expect(maskOf(buildDomainTable(new Map()), 'a.b')).toBe(0)
})

test('operator allow and deny files apply, and are read again on SIGHUP', async () => {
  const dir = tempDir()
  const allow = join(dir, 'allow.txt')
  const deny = join(dir, 'deny.txt')
  writeFileSync(allow, '# our partners\nmailinator.com\n')
  writeFileSync(deny, '@competitor.example\n*.spam.example\nnot a domain\n')
  const logged: string[] = []
  const app = await testApp({
    env: { ALMANAC_EMAIL_ALLOW_LISTS: allow, ALMANAC_EMAIL_DENY_LISTS: deny, ALMANAC_EMAIL_OFFLINE: '1', ALMANAC_STATE_DIR: dir },
    domains: [emailDomainDefault],
    log: (line) => logged.push(line),
  })
  const disposable = async (email: string) =>
    (await app.json('POST', '/api/v1/email/risk', { body: { email } })).body.data.checks.disposable
  try {
    expect(await disposable('a@mailinator.com')).toEqual({ is_disposable: false, provider: null, lists: [] })
    expect(await disposable('a@competitor.example')).toEqual({
      is_disposable: true,
      provider: 'competitor.example',
      lists: ['operator:deny.txt'],
    })
    expect(await disposable('a@x.spam.example')).toMatchObject({ is_disposable: true, provider: 'spam.example' })

    writeFileSync(allow, '')
    writeFileSync(deny, 'other.example\n')
    let handled = signalled()
    process.kill(process.pid, 'SIGHUP')
    await handled
    expect((await disposable('a@other.example')).is_disposable).toBe(true)
    expect((await disposable('a@competitor.example')).is_disposable).toBe(false)
    expect((await disposable('a@mailinator.com')).is_disposable).toBe(true)

    // A file that cannot be read on reload keeps what was loaded, and the handler logs its failure.
    rmSync(deny)
    handled = signalled()
    process.kill(process.pid, 'SIGHUP')
    await handled
    const failure = logged.map((line) => JSON.parse(line)).find((l) => l.msg?.includes('operator email lists could not be reloaded'))
    expect(failure).toMatchObject({ level: 'error', domain: 'email' })
    expect((await disposable('a@other.example')).is_disposable).toBe(true)
  } finally {
    await app.close()
  }
})

test('a missing operator list at start disables the domain, naming the setting', async () => {
  const app = await testApp({
    env: { ALMANAC_EMAIL_DENY_LISTS: join(tempDir(), 'absent.txt'), ALMANAC_EMAIL_OFFLINE: '1' },
    domains: [emailDomainDefault],
  })
  try {
    const { status, body } = await app.json('POST', '/api/v1/email/risk', { body: { email: 'a@b.example' } })
    expect(status).toBe(503)
    expect(body.error.detail).toContain('ALMANAC_EMAIL_DENY_LISTS')
  } finally {
    await app.close()
  }
})
