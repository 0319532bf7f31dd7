#!/usr/bin/env bun
/** The CLI: almanac serve | data | keys | version. */
import { ConfigError, loadConfig } from './config.ts'
import { dataCommand } from './cli/data.ts'
import { keysCommand } from './cli/keys.ts'
import { versionCommand } from './cli/version.ts'
import { DatasetBuildError } from './data/build.ts'
import { DataDirError } from './data/extract.ts'
import { serve } from './serve.ts'
import { StateError } from './stores/sqlite.ts'
import { exitWithSupervisor, superviseWorkers, WORKER_ENV } from './supervisor.ts'

const [command = 'serve', ...rest] = process.argv.slice(2)

async function main() {
  switch (command) {
    case 'serve': {
      const config = loadConfig({ env: process.env, argv: rest })
      const worker = process.env[WORKER_ENV] !== undefined
      const running = config.workers > 1 && !worker ? await superviseWorkers(config, rest) : await serve(config, undefined, { reusePort: worker })
      let stopping = false
      const stop = async () => {
        // A second signal while draining means "now".
        if (stopping) process.exit(1)
        stopping = true
        await running.stop()
        process.exit(0)
      }
      process.on('SIGTERM', stop)
      process.on('SIGINT', stop)
      if (worker) exitWithSupervisor(() => running.stop())
      return
    }
    case 'data':
      process.exitCode = await dataCommand(rest)
      return
    case 'keys':
      process.exitCode = await keysCommand(rest)
      return
    case 'version':
    case '--version':
      process.exitCode = versionCommand(rest)
      return
    default:
      console.error(`almanac: unknown command ${JSON.stringify(command)}. Commands: serve, data, keys, version.`)
      process.exit(2)
  }
}

main().catch((e) => {
  if (e instanceof ConfigError) {
    console.error(`almanac: configuration error: ${e.message}`)
    process.exit(2)
  }
  if (e instanceof DataDirError || e instanceof DatasetBuildError || e instanceof StateError) {
    console.error(`almanac: ${e.message}`)
    process.exit(1)
  }
  console.error(e)
  process.exit(1)
})
