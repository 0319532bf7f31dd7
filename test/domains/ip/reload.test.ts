/**
 * Operator list files: read at start, re-read on SIGHUP without a restart; a file that cannot be read on
 * reload leaves the previous lists in place.
 */
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ipDomain from '../../../src/domains/ip/index.ts'
import { testApp } from '../../support/app.ts'
import { signalled } from '../../support/signals.ts'

const dir = mkdtempSync(join(tmpdir(), 'almanac-ip-lists-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const security = async (app: Awaited<ReturnType<typeof testApp>>, ip: string) =>
  (await app.json('POST', '/api/v1/ip', { body: { ip } })).body.data.security

test('operator lists flag addresses, name their file, and reload on SIGHUP', async () => {
  const tor = join(dir, 'my-tor.txt')
  const vpn = join(dir, 'my-vpn.txt')
  writeFileSync(tor, '# our own exit list\n81.2.69.142\n')
  writeFileSync(vpn, 'socks5://[2a02:ff0::]:1080\n2001:4860:4860::/48\nnot-an-address\n')
  const app = await testApp({ env: { ALMANAC_IP_TOR_LISTS: tor, ALMANAC_IP_VPN_LISTS: vpn }, domains: [ipDomain] })
  try {
    let s = await security(app, '81.2.69.142')
    expect(s).toMatchObject({ is_tor_exit_node: true, is_anonymous: true })
    expect(s.sources).toContain('operator:my-tor.txt')
    s = await security(app, '2001:4860:4860::8888')
    expect(s.is_anonymous_vpn).toBe(true)
    expect(s.sources).toContain('operator:my-vpn.txt')
    expect((await security(app, '81.2.69.143')).is_tor_exit_node).toBe(false)

    // Change the file and send the real signal: the handler registered by the domain re-reads it.
    writeFileSync(tor, '81.2.69.143\n')
    expect(process.listenerCount('SIGHUP')).toBeGreaterThan(0)
    let handled = signalled()
    process.kill(process.pid, 'SIGHUP')
    await handled
    expect((await security(app, '81.2.69.143')).is_tor_exit_node).toBe(true)
    expect((await security(app, '81.2.69.142')).is_tor_exit_node).toBe(false)

    // An unreadable file on reload keeps what was loaded.
    rmSync(tor)
    handled = signalled()
    process.kill(process.pid, 'SIGHUP')
    await handled
    expect((await security(app, '81.2.69.143')).is_tor_exit_node).toBe(true)
  } finally {
    await app.close()
  }
})

test('closing the domain removes its SIGHUP handler', async () => {
  const before = process.listenerCount('SIGHUP')
  const app = await testApp({ domains: [ipDomain] })
  expect(process.listenerCount('SIGHUP')).toBe(before + 1)
  await app.close()
  expect(process.listenerCount('SIGHUP')).toBe(before)
})

test('a missing operator list at start disables the domain, naming the setting', async () => {
  const app = await testApp({ env: { ALMANAC_IP_PROXY_LISTS: join(dir, 'absent.txt') }, domains: [ipDomain] })
  try {
    const { status, body } = await app.json('POST', '/api/v1/ip', { body: { ip: '8.8.8.8' } })
    expect(status).toBe(503)
    expect(body.error.detail).toContain('ALMANAC_IP_PROXY_LISTS')
    // The operator's file layout stays in the log.
    expect(body.error.detail).not.toContain('/')
  } finally {
    await app.close()
  }
})
