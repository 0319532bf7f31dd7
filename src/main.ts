#!/usr/bin/env bun
/** The CLI: almanac serve | start | data | keys | customers | usage | state | version | help. */
import { UsageError, parseCommand } from './cli/args.ts'
import { didYouMean } from './lib/did-you-mean.ts'
import { customersCommand } from './cli/customers.ts'
import { dataCommand } from './cli/data.ts'
import { keysCommand } from './cli/keys.ts'
import { stateCommand } from './cli/state.ts'
import { usageCommand } from './cli/usage-report.ts'
import { MAIN_USAGE, SERVE_USAGE, START_USAGE, usageOf } from './cli/usage.ts'
import { versionCommand } from './cli/version.ts'
import { checkEnvironment, ConfigError, loadConfig, settingOptions, SWITCH_FLAGS } from './config.ts'
import { buildDatasets, DatasetBuildError } from './data/build.ts'
import { DataDirError } from './data/extract.ts'
import { domains } from './domains/index.ts'
import { serve } from './serve.ts'
import { logger } from './lib/logger.ts'
import { StateError } from './stores/sqlite.ts'
import { exitWithSupervisor, superviseWorkers, WORKER_ENV } from './supervisor.ts'

const COMMANDS = ['serve', 'start', 'data', 'keys', 'customers', 'usage', 'state', 'version', 'help']
const [command, ...rest] = process.argv.slice(2)

/** `--access-log` alone means `--access-log=true` (util.parseArgs would take the next flag as its value). */
const withSwitches = (argv: string[]) =>
  argv.map((arg, i) =>
    SWITCH_FLAGS.has(arg) && !['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'].includes(argv[i + 1]?.toLowerCase() ?? '')
      ? `${arg}=true`
      : arg,
  )

async function serveCommand(argv: string[], build: boolean) {
  const args = withSwitches(argv)
  const parsed = parseCommand(args, settingOptions())
  if (parsed.help) {
    console.log(build ? START_USAGE : SERVE_USAGE)
    return
  }
  checkEnvironment(process.env)
  const config = loadConfig({ env: process.env, argv: args })
  const log = logger
  if (build && !Bun.isStandaloneExecutable) {
    // A first run: build what can be built, then serve it; a dataset that failed is reported, and its
    // domain answers 503 naming it, rather than nothing being served at all.
    try {
      // Into the folder the server will read (ALMANAC_DATA_DIR, else datasets/out).
      await buildDatasets(domains, { log, outDir: config.dataDir })
    } catch (e) {
      if (!(e instanceof DatasetBuildError)) throw e
      log({
        level: 'warn',
        msg: 'some datasets could not be built; serving the others (their domains answer 503 and /readyz names them)',
        error: e.message,
      })
    }
  }
  const worker = process.env[WORKER_ENV] !== undefined
  const running =
    config.workers > 1 && !worker ? await superviseWorkers(config, args, log) : await serve(config, log, { reusePort: worker })
  let stopping = false
  const stop = async (signal: string) => {
    // A second signal while draining means "now".
    if (stopping) process.exit(1)
    stopping = true
    log({
      level: 'info',
      msg: 'stopping',
      signal,
      delay_seconds: config.shutdownDelaySeconds,
      grace_seconds: config.shutdownGraceSeconds,
    })
    await running.stop(config.shutdownDelaySeconds)
    log({ level: 'info', msg: 'stopped' })
    process.exit(0)
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  if (worker) exitWithSupervisor(() => running.stop())
}

/** Unknown ALMANAC_* variables are errors, except while asking for help. */
const checkEnvironmentUnlessHelp = () => {
  if (!rest.some((a) => a === '--help' || a === '-h')) checkEnvironment(process.env)
}

async function main() {
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h': {
      // `help --help` is help on help: the main text, like `help help`.
      const topic = command === 'help' && rest[0] !== '--help' && rest[0] !== '-h' ? rest[0] : undefined
      const text = topic ? usageOf(topic) : MAIN_USAGE
      if (text === undefined) throw new UsageError(`no command ${JSON.stringify(topic)}${didYouMean(topic!, COMMANDS)}`)
      console.log(text)
      return
    }
    case 'serve':
    case 'start':
      return serveCommand(rest, command === 'start')
    case 'data':
      checkEnvironmentUnlessHelp()
      process.exitCode = await dataCommand(rest)
      return
    case 'keys':
      checkEnvironmentUnlessHelp()
      process.exitCode = await keysCommand(rest)
      return
    case 'customers':
      checkEnvironmentUnlessHelp()
      process.exitCode = await customersCommand(rest)
      return
    case 'usage':
      checkEnvironmentUnlessHelp()
      process.exitCode = await usageCommand(rest)
      return
    case 'state':
      checkEnvironmentUnlessHelp()
      process.exitCode = await stateCommand(rest)
      return
    case 'version':
    case '--version':
      checkEnvironmentUnlessHelp()
      process.exitCode = versionCommand(rest)
      return
    default:
      throw new UsageError(
        `unknown command ${JSON.stringify(command)}${didYouMean(command, COMMANDS)}. Commands: ${COMMANDS.join(', ')}; \`almanac ` +
          `--help\` for more.`,
      )
  }
}

/**
 * Why the command failed, on stderr. A server (`serve`, `start`) says it as a log line like all its
 * others, so a collector reading its stderr sees JSON to the end; the other commands talk to a person.
 */
const fatal = (message: string) => (command === 'serve' || command === 'start' ? logger.error(message) : console.error(message))

main().catch((e) => {
  if (e instanceof UsageError) {
    console.error(`almanac: ${e.message}`)
    process.exit(2)
  }
  if (e instanceof ConfigError) {
    fatal(`almanac: configuration error: ${e.message}`)
    process.exit(2)
  }
  if (e instanceof DataDirError || e instanceof DatasetBuildError || e instanceof StateError) {
    fatal(`almanac: ${e.message}`)
    process.exit(1)
  }
  fatal(String((e as Error)?.stack ?? e))
  process.exit(1)
})
