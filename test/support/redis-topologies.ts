/**
 * Real Redis topologies for tests, from the Debian `redis-server` on loopback ports: a cluster (masters,
 * each with replicas, slots assigned by `redis-cli --cluster create`) and a Sentinel group (a master, its
 * replicas and three sentinels watching it). No persistence, a temp dir each; `kill` stops one node outright
 * (SIGKILL) so a test can watch a failover; `close` stops everything and removes the dirs. A cluster started
 * with `tls` also listens with TLS, its bus and replication too: a TLS client is told the nodes' TLS ports
 * (CLUSTER SLOTS, MOVED), a plain one (the test's probes) the plain ports.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'bun:test'
import { RedisClient, type Subprocess } from 'bun'
import { freePort } from './ports.ts'
import { startRedis, tlsArgs, type TestCertificates, type TestRedis } from './redis.ts'

const HOST = '127.0.0.1'

interface Node {
  port: number
  proc: Subprocess
  tlsPort?: number
}

/** Asks one node, on a connection of its own; null when it does not answer. */
export async function ask(port: number, command: string, args: string[] = []): Promise<any> {
  const client = new RedisClient(`redis://${HOST}:${port}`, { autoReconnect: false, connectionTimeout: 500 })
  try {
    return await client.send(command, args)
  } catch {
    return null
  } finally {
    client.close()
  }
}

/** Polls `check` until it holds (nodes start, slots spread, a failover completes): the wait is Redis's, not the test's. */
async function until(what: string, check: () => Promise<boolean>, seconds = 30): Promise<void> {
  const end = performance.now() + seconds * 1000
  while (performance.now() < end) {
    if (await check()) return
    await Bun.sleep(50)
  }
  throw new Error(`${what}: not after ${seconds} s`)
}

function spawnNode(dir: string, args: string[], tls?: TestCertificates): Node {
  const port = freePort()
  const tlsPort = tls ? freePort() : undefined
  const tlsOnly = tls ? [...tlsArgs(tls, tlsPort!), '--tls-cluster', 'yes', '--tls-replication', 'yes'] : []
  const proc = Bun.spawn(
    ['redis-server', ...args, '--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, ...tlsOnly],
    { stdout: 'ignore', stderr: 'ignore' },
  )
  return tlsPort ? { port, proc, tlsPort } : { port, proc }
}

/** SIGKILL every node and remove the dir, synchronously (what a process's exit handler may still do). */
function stopNow(nodes: Node[], dir: string) {
  for (const n of nodes) if (n.proc.exitCode === null) n.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}

async function stopAll(nodes: Node[], dir: string) {
  for (const n of nodes) if (n.proc.exitCode === null) n.proc.kill('SIGKILL')
  await Promise.all(nodes.map((n) => n.proc.exited))
  rmSync(dir, { recursive: true, force: true })
}

export interface TestCluster {
  /** `redis://127.0.0.1:<port>` of every node: any of them is a seed. */
  urls: string[]
  ports: number[]
  /** The TLS ports, in the order of `ports`, when started with `tls`. */
  tlsPorts: number[]
  /** Ports of the nodes that are masters now. */
  masters(): Promise<number[]>
  /** SIGKILL one node. */
  kill(port: number): Promise<void>
  close(): Promise<void>
  stopNow(): void
}

const clusterInfo = async (port: number) => String((await ask(port, 'CLUSTER', ['INFO'])) ?? '')

/** A cluster of `masters` masters with `replicas` replicas each, every slot served, every node agreeing. */
export async function startCluster(masters = 3, replicas = 1, options: { tls?: TestCertificates } = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-redis-cluster-'))
  const nodes: Node[] = []
  for (let i = 0; i < masters * (1 + replicas); i++)
    // Validity factor 0: a replica fails over however long ago it last heard its master (a young test cluster's
    // replicas may not have, and would otherwise refuse to take over).
    nodes.push(
      spawnNode(
        dir,
        [
          // The bus port named, not the default port + 10,000: that may be over 65,535 or already taken.
          ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${i}.conf`, '--cluster-port', String(freePort())],
          ...['--cluster-node-timeout', '1000', '--cluster-replica-validity-factor', '0'],
        ],
        options.tls,
      ),
    )
  try {
    await until('cluster nodes answering', async () =>
      (await Promise.all(nodes.map((n) => ask(n.port, 'PING')))).every((r) => r === 'PONG'),
    )
    const create = Bun.spawnSync([
      'redis-cli',
      '--cluster',
      'create',
      ...nodes.map((n) => `${HOST}:${n.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ])
    if (create.exitCode !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}${create.stderr}`)
    await until('cluster state ok on every node', async () =>
      (await Promise.all(nodes.map((n) => clusterInfo(n.port)))).every((info) => info.includes('cluster_state:ok')),
    )
    await until('every replica in sync with its master', async () => {
      const infos = await Promise.all(nodes.map((n) => ask(n.port, 'INFO', ['replication'])))
      const linked = infos.filter((i) => String(i).includes('role:slave') && String(i).includes('master_link_status:up'))
      return linked.length === masters * replicas
    })
  } catch (e) {
    await stopAll(nodes, dir)
    throw e
  }
  const live = () => nodes.filter((n) => n.proc.exitCode === null)
  return {
    urls: nodes.map((n) => `redis://${HOST}:${n.port}`),
    ports: nodes.map((n) => n.port),
    tlsPorts: nodes.flatMap((n) => (n.tlsPort ? [n.tlsPort] : [])),
    async masters() {
      const roles = await Promise.all(live().map(async (n) => [n.port, await ask(n.port, 'ROLE')] as const))
      return roles.filter(([, role]) => Array.isArray(role) && role[0] === 'master').map(([port]) => port)
    },
    async kill(port) {
      const node = nodes.find((n) => n.port === port)
      node?.proc.kill('SIGKILL')
      await node?.proc.exited
    },
    close: () => stopAll(nodes, dir),
    stopNow: () => stopNow(nodes, dir),
  }
}

export interface TestSentinel {
  /** The name the sentinels monitor the master by. */
  name: string
  /** `redis+sentinel`-style addresses of the sentinels: `127.0.0.1:<port>`. */
  sentinels: string[]
  /** The port of the node the sentinels name as master now (null while none is agreed). */
  master(): Promise<number | null>
  /** Ports of the master and replicas as started. */
  dataPorts: number[]
  kill(port: number): Promise<void>
  close(): Promise<void>
  stopNow(): void
}

/** A master with `replicas` replicas, watched by three sentinels (quorum 2) that fail over after a second. */
export async function startSentinel(replicas = 1, name = 'almanac'): Promise<TestSentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-redis-sentinel-'))
  const primary = spawnNode(dir, [])
  const nodes: Node[] = [primary]
  const sentinels: Node[] = []
  try {
    await until('master answering', async () => (await ask(primary.port, 'PING')) === 'PONG')
    for (let i = 0; i < replicas; i++) nodes.push(spawnNode(dir, ['--replicaof', HOST, String(primary.port)]))
    for (let i = 0; i < 3; i++) {
      const conf = join(dir, `sentinel-${i}.conf`)
      writeFileSync(
        conf,
        [
          `sentinel monitor ${name} ${HOST} ${primary.port} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 3000`,
          `sentinel parallel-syncs ${name} 1`,
        ].join('\n') + '\n',
      )
      sentinels.push(spawnNode(dir, [conf, '--sentinel']))
    }
    await until('replicas in sync', async () => {
      const info = String((await ask(primary.port, 'INFO', ['replication'])) ?? '')
      return (info.match(/state=online/g) ?? []).length === replicas
    })
    await until('every sentinel names the master', async () =>
      (await Promise.all(sentinels.map((s) => ask(s.port, 'SENTINEL', ['get-master-addr-by-name', name])))).every(
        (addr) => Array.isArray(addr) && Number(addr[1]) === primary.port,
      ),
    )
    // Sentinels learn the replicas from the master's INFO (every 10 s): one that has not yet would find no replica
    // to promote once the master is killed, and could never learn one from it again.
    await until('every sentinel knows every replica', async () =>
      (await Promise.all(sentinels.map((s) => ask(s.port, 'SENTINEL', ['replicas', name])))).every(
        (list) => Array.isArray(list) && list.length === replicas,
      ),
    )
  } catch (e) {
    await stopAll([...nodes, ...sentinels], dir)
    throw e
  }
  return {
    name,
    sentinels: sentinels.map((s) => `${HOST}:${s.port}`),
    dataPorts: nodes.map((n) => n.port),
    async master() {
      const live = sentinels.filter((s) => s.proc.exitCode === null)
      const answers = await Promise.all(live.map((s) => ask(s.port, 'SENTINEL', ['get-master-addr-by-name', name])))
      const ports = new Set(answers.filter(Array.isArray).map((a) => Number(a[1])))
      return ports.size === 1 ? [...ports][0]! : null
    },
    async kill(port) {
      const node = [...nodes, ...sentinels].find((n) => n.port === port)
      node?.proc.kill('SIGKILL')
      await node?.proc.exited
    },
    close: () => stopAll([...nodes, ...sentinels], dir),
    stopNow: () => stopNow([...nodes, ...sentinels], dir),
  }
}

/** Waits until `check` holds, for tests watching a failover: exported so they wait on Redis, not on a clock. */
export const waitFor = until

/** The store URL of a cluster: every node a seed (over TLS, `rediss+cluster://` and the TLS ports, when it has them). */
export const clusterUrl = (c: TestCluster) =>
  c.tlsPorts.length
    ? `rediss+cluster://${c.tlsPorts.map((p) => `${HOST}:${p}`).join(',')}`
    : `redis+cluster://${c.ports.map((p) => `${HOST}:${p}`).join(',')}`
/** The store URL of a Sentinel group: its sentinels and the master's name. */
export const sentinelUrl = (s: TestSentinel) => `redis+sentinel://${s.sentinels.join(',')}/${s.name}`

/** What `startSomeTopologies` started (a part asked for with 0 replicas is not), and how to stop it. */
export interface StartedTopologies {
  cluster?: TestCluster
  sentinel?: TestSentinel
  close(): Promise<void>
}

/**
 * A cluster of 3 masters with `clusterReplicas` each and a Sentinel group with `sentinelReplicas` (0: that one is
 * not started), together; stopped by `close`, and at exit in any case.
 */
export async function startSomeTopologies(clusterReplicas: number, sentinelReplicas: number): Promise<StartedTopologies> {
  const [cluster, sentinel] = await Promise.all([
    clusterReplicas ? startCluster(3, clusterReplicas) : undefined,
    sentinelReplicas ? startSentinel(sentinelReplicas) : undefined,
  ])
  const atExit = () => {
    cluster?.stopNow()
    sentinel?.stopNow()
  }
  process.once('exit', atExit)
  return {
    cluster,
    sentinel,
    async close() {
      process.off('exit', atExit)
      await Promise.all([cluster?.close(), sentinel?.close()])
    },
  }
}

/**
 * A cluster and a Sentinel group for one test file (`bun test` stops a file's processes when it ends, so
 * files cannot share them): started together in its `beforeAll`, stopped by `close` in its `afterAll`, and
 * at exit in any case. Each store under test takes a key prefix of its own. A file that kills the Sentinel
 * master more than once asks for more replicas (each failover uses one up).
 */
export async function startTopologies(
  options: { sentinelReplicas?: number } = {},
): Promise<{ cluster: TestCluster; sentinel: TestSentinel; close(): Promise<void> }> {
  const { cluster, sentinel, close } = await startSomeTopologies(1, options.sentinelReplicas ?? 1)
  return { cluster: cluster!, sentinel: sentinel!, close }
}

/**
 * The Redis servers of one store test file: a single redis-server, a cluster and a Sentinel group, started
 * before its tests and stopped after. Each store a test opens takes a key prefix of its own (`prefix`), so
 * tests on one server never see each other's keys.
 */
export function redisServers() {
  let single: TestRedis | undefined
  let started: Awaited<ReturnType<typeof startTopologies>> | undefined
  let prefixes = 0
  beforeAll(async () => {
    single = await startRedis()
    started = await startTopologies()
  }, 60_000)
  afterAll(async () => {
    await single?.close()
    await started?.close()
  }, 30_000)
  return {
    /** The single node (its URL, and stop/start for an outage). */
    get single(): TestRedis {
      return single!
    },
    /** The cluster and the Sentinel group themselves, for a test that kills a node. */
    get cluster(): TestCluster {
      return started!.cluster
    },
    get sentinel(): TestSentinel {
      return started!.sentinel
    },
    /** The URL of each topology: `redis://`, `redis+cluster://`, `redis+sentinel://`. */
    url(kind: 'single' | 'cluster' | 'sentinel'): string {
      return kind === 'single' ? single!.url : kind === 'cluster' ? clusterUrl(started!.cluster) : sentinelUrl(started!.sentinel)
    },
    prefix: (name: string) => `${name}${++prefixes}:`,
  }
}
