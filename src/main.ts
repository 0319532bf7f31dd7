#!/usr/bin/env bun
/** The CLI: almanac serve | data | keys | version. */
import { ConfigError, loadConfig, parseFlags } from './config.ts'
import { buildDatasets } from './data/build.ts'
import { domains } from './domains/index.ts'
import { serve } from './serve.ts'

const [command = 'serve', ...rest] = process.argv.slice(2)

async function main() {
  switch (command) {
    case 'serve': {
      const config = loadConfig({ env: process.env, argv: rest })
      const running = await serve(config)
      const stop = async () => {
        await running.stop()
        process.exit(0)
      }
      process.on('SIGTERM', stop)
      process.on('SIGINT', stop)
      return
    }
    case 'data': {
      const [sub, ...args] = rest
      if (sub !== 'build') throw usage('almanac data build [--only <domain>[,<domain>]] [--force]')
      const flags = parseFlags(args)
      const only = flags.get('--only')?.split(',').map((s) => s.trim()).filter(Boolean)
      await buildDatasets(domains, { only, force: flags.has('--force') })
      return
    }
    default:
      console.error(`almanac: unknown command ${JSON.stringify(command)}. Commands: serve, data, keys, version.`)
      process.exit(2)
  }
}

function usage(text: string) {
  return new UsageError(`usage: ${text}`)
}

class UsageError extends Error {}

main().catch((e) => {
  if (e instanceof UsageError) {
    console.error(`almanac: ${e.message}`)
    process.exit(2)
  }
  if (e instanceof ConfigError) {
    console.error(`almanac: configuration error: ${e.message}`)
    process.exit(2)
  }
  console.error(e)
  process.exit(1)
})
