/** Ports handed out by this process: two servers started at once never get the same one. */
const handedOut = new Set<number>()

/**
 * A TCP port on loopback that was free a moment ago, for servers the tests and benchmarks start. Drawn from
 * 10,000–31,999, below the kernel's ephemeral range (32,768 and up here), from which every outgoing connection
 * takes its local port: a port the kernel handed out as "free" could be taken by one of the thousands of
 * client connections a Redis test makes before its server binds it (CI once saw a cluster node never answer).
 */
export function freePort(): number {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = 10_000 + Math.floor(Math.random() * 22_000)
    if (handedOut.has(port)) continue
    try {
      Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } }).stop(true)
    } catch {
      continue
    }
    handedOut.add(port)
    return port
  }
  throw new Error('no free loopback port in 10000–31999')
}
