/**
 * `almanac serve --workers N`: N server processes sharing one port (SO_REUSEPORT, the kernel spreads
 * connections), started, restarted and stopped together by this parent, which serves nothing itself.
 *
 * The parent extracts the datasets once and hands the directory to the workers, so N processes never race
 * to unpack the same files. Each worker is `almanac serve` again with `--workers 1` and the resolved port
 * appended (flags are read left to right, so these win over the operator's). A worker that dies while the
 * parent is running is restarted after a pause that grows while it keeps dying. SIGTERM to the parent is
 * passed on to every worker; each answers /readyz 503 and keeps accepting for `shutdownDelaySeconds`, then
 * finishes its in-flight requests (`shutdownGraceSeconds`), and the parent exits when all have. SIGHUP (reload lists, activate a new
 * data directory) is passed on to every worker.
 */
import { spawn, type Subprocess } from 'bun'
import type { Config } from './config.ts'
import { resolveDataDir } from './data/open.ts'
import { writePid } from './serve.ts'
import { logger, asLogger, type LogSink } from './lib/logger.ts'

export const WORKER_ENV = 'ALMANAC_WORKER_INDEX'
/** The supervisor's pid, so a worker that starts slowly still knows whom it serves. */
const SUPERVISOR_ENV = 'ALMANAC_SUPERVISOR_PID'

/**
 * In a worker: stop when the supervisor is gone (killed with SIGKILL, or crashed), so workers never
 * outlive it holding the port. Linux re-parents an orphan, which changes `process.ppid`.
 */
export function exitWithSupervisor(stop: () => Promise<void>) {
  // Read from the environment, not from process.ppid now: a worker still opening its datasets when the
  // supervisor died has already been re-parented.
  const parent = Number(process.env[SUPERVISOR_ENV]) || process.ppid
  const check = () => {
    if (process.ppid === parent) return
    clearInterval(timer)
    stop().finally(() => process.exit(0))
  }
  const timer = setInterval(check, 1000)
  timer.unref()
  check()
}

export interface Supervisor {
  /** The port every worker listens on. */
  port: number
  /** Process ids of the live workers. */
  pids(): number[]
  /**
   * Stops every worker (SIGTERM, then SIGKILL after the delay and grace period) and resolves when all are
   * gone. Each worker applies the shutdown delay itself, so the argument is not used here.
   */
  stop(delaySeconds?: number): Promise<void>
}

async function freePort(host: string): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: host, fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

/** How to run this same program again: the executable alone when compiled, `bun <main>` from source. */
const selfCommand = () => (Bun.isStandaloneExecutable ? [process.execPath] : [process.execPath, Bun.main])

export async function superviseWorkers(config: Config, argv: string[], sink: LogSink = logger): Promise<Supervisor> {
  const log = asLogger(sink)
  const data = await resolveDataDir({ dataDir: config.dataDir }, log)
  const port = config.port === 0 ? await freePort(config.host) : config.port
  const workers: (Subprocess | undefined)[] = new Array(config.workers).fill(undefined)
  const failures: number[] = new Array(config.workers).fill(0)
  let stopping = false

  const start = (index: number) => {
    const startedAt = Date.now()
    const child = spawn({
      cmd: [...selfCommand(), 'serve', ...argv, '--workers', '1', '--port', String(port), '--data-dir', data.dir],
      env: { ...process.env, [WORKER_ENV]: String(index), [SUPERVISOR_ENV]: String(process.pid) },
      stdio: ['ignore', 'inherit', 'inherit'],
    })
    workers[index] = child
    child.exited.then((code) => {
      if (workers[index] === child) workers[index] = undefined
      if (stopping) return
      failures[index] = Date.now() - startedAt < 10_000 ? failures[index]! + 1 : 1
      const delay = Math.min(30_000, 500 * 2 ** (failures[index]! - 1))
      log({ level: 'error', msg: `worker ${index} (pid ${child.pid}) exited with ${code}; restarting in ${delay} ms` })
      setTimeout(() => {
        if (!stopping) start(index)
      }, delay)
    })
  }
  for (let i = 0; i < config.workers; i++) start(i)
  log({ level: 'info', msg: 'workers started', workers: config.workers, port })
  // Without a listener SIGHUP would end the parent; the workers are the ones that reload.
  const onHangup = () => {
    for (const w of workers) if (w && w.exitCode === null) w.kill('SIGHUP')
  }
  process.on('SIGHUP', onHangup)
  writePid(config.stateDir, log)

  return {
    port,
    pids: () => workers.filter((w): w is Subprocess => !!w && w.exitCode === null).map((w) => w.pid),
    async stop() {
      stopping = true
      process.off('SIGHUP', onHangup)
      const live = workers.filter((w): w is Subprocess => !!w)
      for (const w of live) w.kill('SIGTERM')
      const killer = setTimeout(
        () => {
          for (const w of live) if (w.exitCode === null) w.kill('SIGKILL')
        },
        (config.shutdownDelaySeconds + config.shutdownGraceSeconds + 5) * 1000,
      )
      await Promise.all(live.map((w) => w.exited))
      clearTimeout(killer)
    },
  }
}
