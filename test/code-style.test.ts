/**
 * One formatter and linter for the tree (biome.json: 140 columns, single quotes, no semicolons; the
 * recommended rules, unused imports and variables as errors). `bun run format` rewrites, `bun run lint`
 * is this check. The vendored node-device-detector engine (src/vendor/node-device-detector) keeps its upstream form.
 */
import { expect, test } from 'bun:test'
import { resolve } from 'node:path'

test('the tree is formatted and lint-clean (bun run format fixes the formatting)', () => {
  const run = Bun.spawnSync([resolve(import.meta.dir, '../node_modules/.bin/biome'), 'check', '.'], { cwd: resolve(import.meta.dir, '..') })
  expect({ exit: run.exitCode, output: run.exitCode ? `${run.stdout}${run.stderr}`.slice(0, 4000) : '' }).toEqual({ exit: 0, output: '' })
})

/**
 * Function length: a function a maintainer can read at once. No own function over 150 lines, and
 * createApp (src/server.ts), the composition root, under 120: the layers it composes live in modules of
 * their own (docs/architecture.md). A brace-matching scan of `function` declarations and of functions
 * assigned to a `const` (arrow functions with a block body, function expressions), over the source with
 * comments, strings, template text and regular expressions blanked out. The vendored engine and
 * declaration files are left out.
 */
const MAX_FUNCTION_LINES = 150
const MAX_CREATE_APP_LINES = 120
const ROOT = resolve(import.meta.dir, '..')
const VENDORED = 'src/vendor/'

interface FunctionSpan {
  name: string
  /** 1-based line of its declaration, and its length in lines (declaration to closing brace). */
  line: number
  lines: number
}

/** `source` with comments, string and template text and regex literals replaced by spaces (newlines kept). */
function blankNonCode(source: string): string {
  const out = source.split('')
  const blank = (from: number, to: number) => {
    for (let k = from; k < to && k < out.length; k++) if (out[k] !== '\n') out[k] = ' '
  }
  /** Brace depths at which an open `${` of a template returns to the template's text. */
  const templates: number[] = []
  let depth = 0
  let last = ''
  let i = 0
  while (i < source.length) {
    const c = source[i]!
    const next = source[i + 1]
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i)
      blank(i, end < 0 ? source.length : end)
      i = end < 0 ? source.length : end
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2) + 2
      blank(i, end)
      i = end
    } else if (c === '"' || c === "'") {
      let j = i + 1
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1
      blank(i + 1, j)
      i = j + 1
      last = 'a'
    } else if (c === '`' || (c === '}' && templates.at(-1) === depth)) {
      if (c === '}') templates.pop()
      let j = i + 1
      while (j < source.length && source[j] !== '`' && !(source[j] === '$' && source[j + 1] === '{')) j += source[j] === '\\' ? 2 : 1
      blank(c === '}' ? i : i + 1, j)
      if (source[j] === '`') {
        i = j + 1
        last = 'a'
      } else {
        blank(j, j + 2)
        templates.push(depth)
        i = j + 2
        last = '{'
      }
    } else if (c === '/' && (/[(,=:[!&|?{};>]/.test(last) || last === '' || /\b(return|typeof)$/.test(source.slice(0, i).trimEnd()))) {
      let j = i + 1
      let inClass = false
      while (j < source.length && source[j] !== '\n' && (inClass || source[j] !== '/')) {
        if (source[j] === '[') inClass = true
        else if (source[j] === ']') inClass = false
        j += source[j] === '\\' ? 2 : 1
      }
      blank(i + 1, j)
      i = j + 1
      last = 'a'
    } else {
      if (c === '{') depth++
      else if (c === '}') depth--
      if (!/\s/.test(c)) last = c
      i++
    }
  }
  return out.join('')
}

/** The index just past the bracket that closes the one at `open`, counting only its own kind (`=>` is no `>`). */
function closing(code: string, open: number): number {
  const opener = code[open]!
  const closer = { '(': ')', '[': ']', '{': '}', '<': '>' }[opener]
  let depth = 0
  for (let i = open; i < code.length; i++) {
    const c = code[i]!
    if (c === '=' && code[i + 1] === '>') i++
    else if (c === opener) depth++
    else if (c === closer && --depth === 0) return i + 1
  }
  return code.length
}

const skipSpace = (code: string, i: number) => {
  while (i < code.length && /\s/.test(code[i]!)) i++
  return i
}

/**
 * From just past a parameter list: the index of the body's `{`, or -1 (an arrow with an expression body,
 * a declaration without a body). `arrow`: an arrow function (its body follows `=>`).
 */
function bodyStart(code: string, i: number, arrow: boolean): number {
  i = skipSpace(code, i)
  if (code[i] === ':') {
    // A return type: balanced groups, up to `=>` (arrow) or a `{` not in type position (declaration).
    i++
    while (i < code.length) {
      i = skipSpace(code, i)
      const c = code[i]!
      if (arrow && c === '=' && code[i + 1] === '>') break
      if (!arrow && c === '{') {
        const before = code.slice(0, i).trimEnd()
        if (!/(:|\||&|=>)$/.test(before)) return i
      }
      if ('([{<'.includes(c)) i = closing(code, i)
      else if (c === '\n' || c === ')' || c === '}') return -1
      else i++
    }
  }
  if (arrow) {
    if (code[i] !== '=' || code[i + 1] !== '>') return -1
    i = skipSpace(code, i + 2)
  }
  return code[i] === '{' ? i : -1
}

/** Every function declaration and const-assigned function of `source`, with its length in lines. */
export function functionSpans(source: string): FunctionSpan[] {
  const code = blankNonCode(source)
  const lineOf = (index: number) => code.slice(0, index).split('\n').length
  const spans: FunctionSpan[] = []
  const add = (name: string, start: number, params: number, arrow: boolean) => {
    const body = bodyStart(code, closing(code, params), arrow)
    if (body < 0) return
    const line = lineOf(start)
    spans.push({ name, line, lines: lineOf(closing(code, body) - 1) - line + 1 })
  }
  for (const m of code.matchAll(/\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*(<[^(]*>)?\s*\(/g))
    add(m[1]!, m.index, m.index + m[0].length - 1, false)
  for (const m of code.matchAll(/\bconst\s+([A-Za-z_$][\w$]*)\s*(?::[^=\n]*)?=\s*(async\s+)?(function\b[^(]*)?\(/g))
    add(m[1]!, m.index, m.index + m[0].length - 1, !m[3])
  return spans
}

const ownSources = () =>
  [...new Bun.Glob('src/**/*.ts').scanSync({ cwd: ROOT })].filter((path) => !path.startsWith(VENDORED) && !path.endsWith('.d.ts')).sort()

test('the scan finds long functions of every kind it covers (so the length check can fail)', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = \`x\${'}'}\` + '{' // }`).join('\n')
  const source = [
    `export async function declared(a: { b: string }, c = /[{]/): Promise<{ d: number }> {`,
    lines(160),
    `}`,
    `const arrow = async ({ e }: { e: string }): Promise<void> => {`,
    lines(10),
    `}`,
    `const expression = (f: number) => f + 1`,
    `export function typed(): { g: string } {`,
    lines(3),
    `}`,
  ].join('\n')
  expect(functionSpans(source)).toEqual([
    { name: 'declared', line: 1, lines: 162 },
    { name: 'typed', line: 176, lines: 5 },
    { name: 'arrow', line: 163, lines: 12 },
  ])
})

test(`no own function is over ${MAX_FUNCTION_LINES} lines, createApp not over ${MAX_CREATE_APP_LINES}`, async () => {
  const long: string[] = []
  let createApp: FunctionSpan | undefined
  for (const path of ownSources()) {
    for (const span of functionSpans(await Bun.file(resolve(ROOT, path)).text())) {
      if (span.lines > MAX_FUNCTION_LINES) long.push(`${path}:${span.line} ${span.name} (${span.lines} lines)`)
      if (path === 'src/server.ts' && span.name === 'createApp') createApp = span
    }
  }
  expect(createApp).toBeDefined()
  if (createApp!.lines > MAX_CREATE_APP_LINES) long.push(`src/server.ts:${createApp!.line} createApp (${createApp!.lines} lines)`)
  expect(long).toEqual([])
})

/**
 * Line width: the formatter breaks code at biome.json's `lineWidth` but leaves a long string or comment as
 * it is, so this check holds every line of own code to it (a string is wrapped with `+`, a comment rewrapped).
 * Own code is the .ts files under src/, test/, bench/, build/ and scripts/ (declaration files included: biome
 * skips them). Left out: vendored code (src/vendor, kept in its upstream form) and generated files
 * (build/*.generated.ts; examples/client/almanac-api.ts is outside these folders).
 */
const LINE_WIDTH: number = JSON.parse(await Bun.file(resolve(ROOT, 'biome.json')).text()).formatter.lineWidth
const WIDTH_CHECKED = ['src', 'test', 'bench', 'build', 'scripts']
const WIDTH_EXEMPT = [/^src\/vendor\//, /^build\/.*\.generated\.ts$/]

/** The lines of `source` over `width` characters (code points, as an editor counts them), 1-based. */
function overWidth(source: string, width = LINE_WIDTH): { line: number; width: number }[] {
  return source
    .split('\n')
    .map((text, i) => ({ line: i + 1, width: [...text].length }))
    .filter((l) => l.width > width)
}

test('the line width check finds a line one character over, and counts characters, not bytes', () => {
  expect(LINE_WIDTH).toBe(140)
  const at = (n: number) => `const s = '${'é'.repeat(n - 12)}'`
  expect(at(140).length).toBe(140)
  expect(overWidth([at(140), at(141), '// ok', at(200)].join('\n'))).toEqual([
    { line: 2, width: 141 },
    { line: 4, width: 200 },
  ])
})

test(`no line of own code is over ${LINE_WIDTH} characters (wrap long strings with + and rewrap comments)`, async () => {
  const files = WIDTH_CHECKED.flatMap((dir) => [...new Bun.Glob(`${dir}/**/*.ts`).scanSync({ cwd: ROOT })])
    .filter((path) => !WIDTH_EXEMPT.some((exempt) => exempt.test(path)))
    .sort()
  expect(files).toContain('src/server.ts')
  const long: string[] = []
  for (const path of files)
    for (const l of overWidth(await Bun.file(resolve(ROOT, path)).text())) long.push(`${path}:${l.line} (${l.width} characters)`)
  expect(long).toEqual([])
})
