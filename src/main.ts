#!/usr/bin/env bun
/** The CLI: almanac serve | data | keys | version. */
import { ConfigError, loadConfig } from './config.ts'
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
  console.error(e)
  process.exit(1)
})
