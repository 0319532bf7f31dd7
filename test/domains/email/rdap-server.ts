/**
 * An RDAP server on 127.0.0.1 for the tests and the benchmark (Bun.serve): `GET /domain/{name}` answers
 * an RFC 9083 domain object whose registration event is `days` before the given clock time, 404 for names
 * it does not know, never for `slow` names (until the test calls `release()` or the server stops: then 504),
 * 503 for `broken` ones, a 302 to `redirect`'s Location, and for `hops` that many 302s within the server
 * (`/hop/1/domain/{name}` …) before the record. Counts requests (each hop too),
 * and with `delayMs` holds each answer that long, recording the most answers held at once (`maxInFlight`),
 * so a test can see lookups overlap.
 */
export interface RdapFixture {
  /** Base URL ending in `/`, for ALMANAC_EMAIL_RDAP_URL. */
  base: string
  requests: Map<string, number>
  /** The most requests (other than `slow` ones, which never end) being answered at the same time. */
  readonly maxInFlight: number
  /** Resolves once `n` requests for `slow` names are waiting. */
  whenHanging(n: number): Promise<void>
  /** Answers the waiting `slow` requests (504). */
  release(): void
  stop(): Promise<void>
}

export type RdapZone =
  | { days: number }
  | { noEvent: true }
  | { slow: true }
  | { broken: true }
  | { huge: true }
  | { notJson: true }
  | { redirect: string }
  | { hops: number; days: number }

export function startRdapServer(zones: Record<string, RdapZone>, now: number, { delayMs = 0 } = {}): RdapFixture {
  const requests = new Map<string, number>()
  const hanging = new Set<() => void>()
  const hangingWaiters: { n: number; resolve: () => void }[] = []
  let inFlight = 0
  let maxInFlight = 0
  const answer = (req: Request): Response | Promise<Response> => {
    const path = new URL(req.url).pathname
    const m = /^(?:\/hop\/(\d+))?\/domain\/([^/]+)$/.exec(path)
    if (!m) return new Response('{"errorCode":400}', { status: 400 })
    const hop = Number(m[1] ?? 0)
    const name = decodeURIComponent(m[2]!).toLowerCase()
    requests.set(name, (requests.get(name) ?? 0) + 1)
    const zone = zones[name]
    if (!zone)
      return Response.json({ errorCode: 404, title: 'Not Found' }, { status: 404, headers: { 'content-type': 'application/rdap+json' } })
    if ('slow' in zone)
      return new Promise<Response>((resolve) => {
        hanging.add(() => resolve(new Response('', { status: 504 })))
        for (const w of hangingWaiters.filter((w) => hanging.size >= w.n)) {
          hangingWaiters.splice(hangingWaiters.indexOf(w), 1)
          w.resolve()
        }
      })
    if ('redirect' in zone) return new Response(null, { status: 302, headers: { location: zone.redirect } })
    if ('hops' in zone && hop < zone.hops)
      return new Response(null, { status: 302, headers: { location: `/hop/${hop + 1}/domain/${name}` } })
    if ('broken' in zone) return new Response('upstream down', { status: 503 })
    if ('notJson' in zone) return new Response('<html>hello</html>', { headers: { 'content-type': 'text/html' } })
    // 2 MB streamed without a length: the client must stop reading at its limit.
    if ('huge' in zone)
      return new Response(
        new ReadableStream({ pull: (c) => (c.enqueue(new TextEncoder().encode(' '.repeat(65536))), undefined) }).pipeThrough(
          new TransformStream(),
        ),
        { headers: { 'content-type': 'application/rdap+json' } },
      )
    const events = [{ eventAction: 'last changed', eventDate: new Date(now - 86400_000).toISOString() }]
    if ('days' in zone) events.unshift({ eventAction: 'registration', eventDate: new Date(now - zone.days * 86400_000).toISOString() })
    return Response.json(
      { objectClassName: 'domain', ldhName: name, rdapConformance: ['rdap_level_0'], events },
      { headers: { 'content-type': 'application/rdap+json' } },
    )
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const res = answer(req)
      if (res instanceof Promise || delayMs === 0) return res
      maxInFlight = Math.max(maxInFlight, ++inFlight)
      await Bun.sleep(delayMs)
      inFlight--
      return res
    },
  })
  return {
    base: `http://127.0.0.1:${server.port}/`,
    requests,
    get maxInFlight() {
      return maxInFlight
    },
    whenHanging: (n) => (hanging.size >= n ? Promise.resolve() : new Promise<void>((resolve) => hangingWaiters.push({ n, resolve }))),
    release() {
      for (const release of hanging) release()
      hanging.clear()
    },
    async stop() {
      for (const release of hanging) release()
      await server.stop(true)
    },
  }
}
