/**
 * Settings declared once. Each declaration holds its parser (whose return type is the setting's type), its
 * default, its environment names, its flag and a one-line description; a schema is a nested object of
 * them. From a schema come the configuration's type (`ValuesOf`), its defaults, the list that the layers
 * are read from, the README's configuration table and the `--help` lines, so none of these can drift.
 */

export class ConfigError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/** Reads one raw value (a string from env or flags, any JSON from the file); `name` is how the operator wrote it. */
export type Parser<T> = (raw: unknown, name: string) => T

export interface Setting<T = unknown, Optional extends boolean = boolean> {
  readonly parse: Parser<T>
  /** Absent on optional settings: their value is then `undefined` and their meaning is in `shown`. */
  readonly default?: T
  readonly optional: Optional
  readonly env: readonly string[]
  readonly flag?: string
  /** One line on what it does (Markdown; backticks are dropped in `--help`). */
  readonly doc: string
  /** The default as the table shows it, when the value alone does not say it (`cores`, `1 GiB`). */
  readonly shown?: string
  /** A docs page (and anchor) the README row links to. */
  readonly see?: string
}

interface Declaration {
  env?: string | string[]
  flag?: string
  doc: string
  shown?: string
  see?: string
}

const declare = <T, O extends boolean>(parse: Parser<T>, optional: O, d: Declaration & { default?: T }): Setting<T, O> => ({
  parse,
  optional,
  default: d.default,
  env: d.env === undefined ? [] : Array.isArray(d.env) ? d.env : [d.env],
  flag: d.flag,
  doc: d.doc,
  shown: d.shown,
  see: d.see,
})

/** A setting that always has a value: its default until a layer sets it. */
export const setting = <T>(parse: Parser<T>, d: Declaration & { default: NoInfer<T> }): Setting<T, false> => declare(parse, false, d)

/** A setting that may stay unset (`undefined`); what unset means goes in `shown`. */
export const optional = <T>(parse: Parser<T>, d: Declaration): Setting<T, true> => declare(parse, true, d)

export interface Schema {
  readonly [key: string]: Setting<any, boolean> | Schema
}

type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** The typed values a schema declares: a setting's parser gives its type; optional settings are optional keys. */
export type ValuesOf<S> = Simplify<
  {
    -readonly [K in keyof S as S[K] extends Setting<any, true> ? never : K]: S[K] extends Setting<infer T, false> ? T : ValuesOf<S[K]>
  } & {
    -readonly [K in keyof S as S[K] extends Setting<any, true> ? K : never]?: S[K] extends Setting<infer T, true> ? T : never
  }
>

const isSetting = (v: Setting<any, boolean> | Schema): v is Setting<any, boolean> => typeof (v as Setting).parse === 'function'

/** Each setting with its dotted path (the config file's key and the value's place), in declaration order. */
export type Entry = Setting & { path: string }

export function entriesOf(schema: Schema, prefix = ''): Entry[] {
  return Object.entries(schema).flatMap(([key, v]) => (isSetting(v) ? [{ ...v, path: prefix + key }] : entriesOf(v, `${prefix}${key}.`)))
}

/** The defaults as a fresh value (nested objects included; optional settings absent). */
export function defaultsOf<S extends Schema>(schema: S): ValuesOf<S> {
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(schema)) {
    if (!isSetting(v)) out[key] = defaultsOf(v)
    else if (!v.optional) out[key] = structuredClone(v.default)
  }
  return out as ValuesOf<S>
}

const shownDefault = (s: Setting): string => {
  if (s.shown !== undefined) return s.shown
  const d = s.default
  if (d === undefined || (Array.isArray(d) && d.length === 0)) return '—'
  return String(d)
}

const names = (s: Entry) => (s.env.length ? s.env : [s.path])

/** The README's configuration table (Markdown), one row per setting. */
export function markdownTable(entries: Entry[]): string {
  const rows = entries.map((s) => {
    const name = names(s)
      .map((n) => `\`${n}\``)
      .join(', ')
    const flag = s.flag ? ` (\`${s.flag}\`)` : ''
    const doc = s.see ? `${s.doc} ([${s.see.replace(/^docs\/|#.*$/g, '')}](${s.see}))` : s.doc
    return `| ${name}${flag} | \`${s.path}\` | ${shownDefault(s)} | ${doc} |`
  })
  return ['| Environment (flag) | Config file | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n')
}

/** The settings as `--help` lists them: names and flag, then the default and the description, plain text. */
export function helpLines(entries: Entry[]): string {
  const plain = (s: string) => s.replace(/`/g, '')
  return entries
    .map(
      (s) =>
        `  ${s.path}: ${names(s).join(', ')}${s.flag ? ` (${s.flag})` : ''}\n      ${plain(s.doc)} Default: ${plain(shownDefault(s))}.`,
    )
    .join('\n')
}
