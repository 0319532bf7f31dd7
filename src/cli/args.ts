/**
 * Strict command-line parsing for every command (node's `util.parseArgs` in strict mode): an unknown
 * flag is an error naming the nearest known one, never silently ignored (`--prot 9000` once served on
 * 8080). `--help`/`-h` is known to every command and handled before anything runs.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { didYouMean } from '../lib/did-you-mean.ts'

export class UsageError extends Error {
  override name = 'UsageError'
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>

export interface Parsed {
  values: Record<string, string | boolean | undefined>
  positionals: string[]
  help: boolean
}

/**
 * Parses `argv` against `options` (long names without dashes). Throws UsageError for an unknown flag, a
 * string flag without its value, or positionals where none are taken.
 */
export function parseCommand(argv: string[], options: OptionSpec, allowPositionals = false): Parsed {
  const spec: OptionSpec = { help: { type: 'boolean', short: 'h' }, ...options }
  const help = argv.some((a) => a === '--help' || a === '-h')
  if (help) return { values: {}, positionals: [], help }
  try {
    const { values, positionals } = parseArgs({ args: argv, options: spec, strict: true, allowPositionals })
    return { values: values as Parsed['values'], positionals, help: false }
  } catch (e) {
    const message = (e as Error).message
    const flag = /'(-{1,2}[^' ]+)'/.exec(message)?.[1]
    const code = (e as { code?: string }).code
    if (flag && code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const known = Object.keys(spec).map((k) => `--${k}`)
      throw new UsageError(`unknown option ${flag}${didYouMean(flag.split('=')[0]!, known)}`)
    }
    if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL')
      throw new UsageError(`unexpected argument${flag ? ` ${flag}` : ''}: this command takes options only (${message.split('\n')[0]})`)
    throw new UsageError(message.split('\n')[0]!.replace(/^Option '([^']+)' argument missing/, 'option $1 needs a value'))
  }
}
