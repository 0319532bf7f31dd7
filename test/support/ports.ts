/** A TCP port on loopback that was free a moment ago, for servers the tests and benchmarks start. */
export function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}
