/**
 * The server's one log format: every line a JSON object that starts with `time` (ISO 8601, UTC) and
 * `level` (`debug`, `info`, `warn`, `error`), then `msg` and whatever else the writer said. A collector
 * (journald, Loki, a container runtime) can then parse and filter every line the same way.
 *
 * One type logs: `Logger`, called with an object of fields (`log({ level: 'warn', msg, … })`) or through its
 * level methods; plain text becomes `{"time","level":"info","msg"}`. A function that logs takes a `LogSink`
 * (a Logger, or a test's `(line) => lines.push(line)` that receives each formatted line) and makes it a
 * Logger once with `asLogger`. The access log goes to stdout through its own buffered writer
 * (http/edge/observability.ts) in the same shape.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error'

type Fields = Record<string, unknown>

export interface Logger {
  /** A line made elsewhere (JSON object text or plain text), or an object of fields. */
  (line: string | Fields): void
  info(msg: string, fields?: Fields): void
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields): void
}

const LEVELS = new Set<unknown>(['debug', 'info', 'warn', 'error'])

/** `{time, level, ...fields}`: time and level first, whatever order the writer used. */
function format(fields: Fields): string {
  const { time, level, ...rest } = fields
  const out: Fields = {
    time: typeof time === 'string' && time ? time : new Date().toISOString(),
    level: LEVELS.has(level) ? level : 'info',
    ...rest,
  }
  // A level the writer spelled some other way is kept, not lost.
  if (level !== undefined && !LEVELS.has(level)) out.given_level = level
  return JSON.stringify(out)
}

/** The fields of one line given as text: its members when it is a JSON object, else `{msg}`. */
function fieldsOf(line: string): Fields {
  if (line.startsWith('{') && line.endsWith('}')) {
    try {
      const parsed = JSON.parse(line)
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Fields
    } catch {
      // Text that only looks like JSON: logged as a message.
    }
  }
  return { msg: line }
}

/** One line of the format above from any line or fields. */
export const logLine = (line: string | Fields): string => format(typeof line === 'string' ? fieldsOf(line) : line)

export function createLogger(write: (line: string) => void = (line) => console.error(line)): Logger {
  const logger = ((line: string | Fields) => write(logLine(line))) as Logger
  logger.info = (msg, fields) => write(format({ ...fields, level: 'info', msg }))
  logger.warn = (msg, fields) => write(format({ ...fields, level: 'warn', msg }))
  logger.error = (msg, fields) => write(format({ ...fields, level: 'error', msg }))
  return logger
}

/** The process's logger: one line a call to stderr. */
export const logger: Logger = createLogger()

/**
 * What a caller hands a function that logs: the Logger itself, or a function that takes each formatted line
 * (a test's `(line) => lines.push(line)`). The function makes it a Logger once (`asLogger`) and logs objects.
 */
export type LogSink = ((line: string) => void) & Partial<Pick<Logger, 'info' | 'warn' | 'error'>>

/**
 * `log` as a Logger: itself when it is one, else a Logger writing its formatted lines through it (a test's
 * `(line) => lines.push(line)`, the app's `log` setting). The one logger the domains are handed.
 */
export function asLogger(log: LogSink): Logger {
  const given = log as Partial<Logger>
  return typeof given.info === 'function' && typeof given.warn === 'function' && typeof given.error === 'function'
    ? (log as Logger)
    : createLogger(log)
}
