/**
 * Client address resolution: unit cases for the header walk, then GET /ip/me on a real loopback port
 * through `serve()`, where the TCP peer is 127.0.0.1 — trusted in one server, not in the other.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../../../src/config.ts'
import { clientAddress, type ProxyHeader, trustedProxies } from '../../../src/http/edge/client-ip.ts'
import { serve, type Running } from '../../../src/serve.ts'

const resolve = (peer: string | null, headers: Record<string, string>, trusted: string[], header: ProxyHeader = 'x-forwarded-for') =>
  clientAddress(new Headers(headers), peer, trustedProxies(trusted, header))

describe('clientAddress', () => {
  test('an untrusted peer is the client, whatever the headers say', () => {
    expect(resolve('203.0.113.7', { 'x-forwarded-for': '8.8.8.8' }, ['127.0.0.1'])).toMatchObject({
      ip: { text: '203.0.113.7' },
      via: 'peer',
    })
    expect(resolve('203.0.113.7', { 'x-forwarded-for': '8.8.8.8' }, [])).toMatchObject({ ip: { text: '203.0.113.7' }, via: 'peer' })
  })

  test('a trusted peer: the rightmost untrusted hop is the client (left of it could be forged)', () => {
    expect(resolve('10.0.0.2', { 'x-forwarded-for': '6.6.6.6, 8.8.8.8' }, ['10.0.0.0/8'])).toMatchObject({
      ip: { text: '8.8.8.8' },
      via: 'x-forwarded-for',
    })
    expect(resolve('10.0.0.2', { 'x-forwarded-for': '6.6.6.6, 8.8.8.8, 10.1.1.1, 10.2.2.2' }, ['10.0.0.0/8'])).toMatchObject({
      ip: { text: '8.8.8.8' },
    })
  })

  test('all hops trusted: the leftmost is the client', () => {
    expect(resolve('10.0.0.2', { 'x-forwarded-for': '10.9.9.9, 10.1.1.1' }, ['10.0.0.0/8'])).toMatchObject({ ip: { text: '10.9.9.9' } })
  })

  test('hops with ports, brackets and IPv6; IPv6 proxies by CIDR; mapped peers', () => {
    expect(resolve('::1', { 'x-forwarded-for': '[2001:4860:4860::8888]:443' }, ['::1'])).toMatchObject({
      ip: { text: '2001:4860:4860::8888' },
    })
    expect(resolve('2001:db8::5', { 'x-forwarded-for': '1.1.1.1:5555' }, ['2001:db8::/32'])).toMatchObject({ ip: { text: '1.1.1.1' } })
    expect(resolve('::ffff:127.0.0.1', { 'x-forwarded-for': '8.8.8.8' }, ['127.0.0.0/8'])).toMatchObject({ ip: { text: '8.8.8.8' } })
  })

  test('only the header the proxy is configured to set counts; the other is ignored entirely', () => {
    const headers = { forwarded: 'for=6.6.6.6;proto=https, for="[2001:4860:4860::8844]:4711";by=10.0.0.1', 'x-forwarded-for': '9.9.9.9' }
    expect(resolve('10.0.0.1', headers, ['10.0.0.0/8'], 'forwarded')).toMatchObject({
      ip: { text: '2001:4860:4860::8844' },
      via: 'forwarded',
    })
    expect(resolve('10.0.0.1', headers, ['10.0.0.0/8'])).toMatchObject({ ip: { text: '9.9.9.9' }, via: 'x-forwarded-for' })
    // A proxy that only appends X-Forwarded-For passes the client's own Forwarded through: not believed.
    expect(resolve('10.0.0.1', { forwarded: 'for=1.2.3.4' }, ['10.0.0.0/8'])).toMatchObject({ ip: { text: '10.0.0.1' }, via: 'peer' })
    expect(resolve('10.0.0.1', { 'x-forwarded-for': '1.2.3.4' }, ['10.0.0.0/8'], 'forwarded')).toMatchObject({
      ip: { text: '10.0.0.1' },
      via: 'peer',
    })
  })

  test('an unreadable hop stops the walk at the last address that could be checked', () => {
    expect(resolve('10.0.0.2', { 'x-forwarded-for': '8.8.8.8, garbage, 10.1.1.1' }, ['10.0.0.0/8'])).toMatchObject({
      ip: { text: '10.1.1.1' },
    })
    expect(resolve('10.0.0.2', { forwarded: 'for=unknown' }, ['10.0.0.0/8'], 'forwarded')).toMatchObject({
      ip: { text: '10.0.0.2' },
      via: 'peer',
    })
  })

  test('no peer (no server): unknown', () => {
    expect(resolve(null, { 'x-forwarded-for': '8.8.8.8' }, ['0.0.0.0/0'])).toEqual({ ip: null, via: 'unknown' })
  })

  test('a bad trusted-proxy header is refused at start, naming the setting', () => {
    expect(() => loadConfig({ env: { ALMANAC_TRUSTED_PROXY_HEADER: 'x-real-ip' } })).toThrow(/ALMANAC_TRUSTED_PROXY_HEADER.*x-real-ip/)
    expect(loadConfig({ env: { ALMANAC_TRUSTED_PROXY_HEADER: 'Forwarded' } }).trustedProxyHeader).toBe('forwarded')
    expect(loadConfig({ env: {} }).trustedProxyHeader).toBe('x-forwarded-for')
  })

  test('a bad trusted-proxy entry is named', () => {
    expect(() => trustedProxies(['10.0.0.0/8', '10.0.0.0/40'])).toThrow(/ALMANAC_TRUSTED_PROXIES: "10.0.0.0\/40"/)
    expect(() => trustedProxies(['proxy.internal'])).toThrow(/proxy.internal/)
  })
})

describe('GET /ip/me on a real loopback port', () => {
  const KEY = 'client-ip-key-0123456789'
  const start = (trusted: string, header = 'x-forwarded-for') =>
    serve(
      loadConfig({
        env: {
          ALMANAC_API_KEYS: `${KEY}:t`,
          ALMANAC_PLANS: 't:100000/1d',
          ALMANAC_DEFAULT_PLAN: 't',
          ALMANAC_HOST: '127.0.0.1',
          ALMANAC_PORT: '0',
          ALMANAC_TRUSTED_PROXIES: trusted,
          ALMANAC_TRUSTED_PROXY_HEADER: header,
          ALMANAC_ACCESS_LOG: 'false',
        },
      }),
      () => {},
    )
  let trusting: Running
  let trustingForwarded: Running
  let distrusting: Running
  beforeAll(async () => {
    trusting = await start('127.0.0.1,10.0.0.0/8')
    trustingForwarded = await start('127.0.0.1,10.0.0.0/8', 'forwarded')
    distrusting = await start('192.0.2.1')
  })
  afterAll(async () => {
    await trusting.stop()
    await trustingForwarded.stop()
    await distrusting.stop()
  })
  const me = async (server: Running, headers: Record<string, string> = {}, form = 'enveloped') => {
    const res = await fetch(`${server.url}/api/v1/ip/me`, { headers: { 'x-api-key': KEY, 'x-response-form': form, ...headers } })
    return { status: res.status, body: (await res.json()) as any }
  }

  test('peer 127.0.0.1 trusted: X-Forwarded-For names the client', async () => {
    const { status, body } = await me(trusting, { 'x-forwarded-for': '8.8.8.8' })
    expect(status).toBe(200)
    expect(body.data.ip).toBe('8.8.8.8')
    expect(body.data.network.asn).toBe(15169)
  })

  test('peer trusted, chain through a trusted internal hop', async () => {
    const { body } = await me(trusting, { 'x-forwarded-for': '6.6.6.6, 1.1.1.1, 10.3.3.3' })
    expect(body.data.ip).toBe('1.1.1.1')
    expect(body.data.network.asn).toBe(13335)
  })

  test('proxy set to Forwarded: its for= names the client, Form B', async () => {
    const { body } = await me(trustingForwarded, { forwarded: 'for="[2001:4860:4860::8888]"' }, 'bare')
    expect(body.ip).toBe('2001:4860:4860::8888')
    expect(body.isp).toMatch(/Google/)
  })

  test('proxy set to X-Forwarded-For: a client-sent Forwarded changes nothing', async () => {
    const spoof = { forwarded: 'for=1.2.3.4;host=evil;proto=https' }
    expect((await me(trusting, spoof)).body.data).toMatchObject({ ip: '127.0.0.1', reserved_range: 'loopback' })
    expect((await me(trusting, { ...spoof, 'x-forwarded-for': '8.8.8.8' })).body.data).toMatchObject({ ip: '8.8.8.8' })
  })

  test('proxy set to Forwarded: a client-sent X-Forwarded-For changes nothing', async () => {
    const spoof = { 'x-forwarded-for': '1.2.3.4' }
    expect((await me(trustingForwarded, spoof)).body.data).toMatchObject({ ip: '127.0.0.1', reserved_range: 'loopback' })
    expect((await me(trustingForwarded, { ...spoof, forwarded: 'for=8.8.8.8' })).body.data).toMatchObject({ ip: '8.8.8.8' })
  })

  test('peer trusted, no header: the peer itself (loopback, reserved)', async () => {
    const { body } = await me(trusting)
    expect(body.data).toMatchObject({ ip: '127.0.0.1', is_reserved: true, reserved_range: 'loopback', location: null })
  })

  test('peer 127.0.0.1 not trusted: headers are ignored', async () => {
    const { status, body } = await me(distrusting, { 'x-forwarded-for': '8.8.8.8', forwarded: 'for=8.8.8.8' })
    expect(status).toBe(200)
    expect(body.data.ip).toBe('127.0.0.1')
    expect(body.data.reserved_range).toBe('loopback')
  })

  test('fields applies to /ip/me', async () => {
    const { body } = await me(trusting, { 'x-forwarded-for': '8.8.8.8' }, 'bare')
    expect(body.country.iso_code).toBe('US')
    const trimmed = await fetch(`${trusting.url}/api/v1/ip/me?fields=ip`, { headers: { 'x-api-key': KEY, 'x-forwarded-for': '8.8.8.8' } })
    expect(((await trimmed.json()) as any).data).toEqual({ ip: '8.8.8.8' })
  })
})
