/**
 * The shape of the import graph (docs/architecture.md, "Layers"): no import circles, no domain importing
 * another domain's folder, no import back up the layers, and no domain file but its descriptor reaching
 * into its build. Read from the source text, so type-only imports count too: a circle over a type is
 * still a circle a reader has to untangle. The vendored UA engine is JavaScript and is not read.
 */
import { expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '..')

/** Lowest first: a file may import its own layer and the ones below it, never one above. */
const LAYERS = ['lib', 'config', 'data', 'http', 'domains', 'server', 'cli', 'tools'] as const
type Layer = (typeof LAYERS)[number]

function layerOf(file: string): Layer | undefined {
  if (file.startsWith('src/lib/')) return 'lib'
  // A domain's settings declarations are read by config.ts (which composes the Config), so they sit with it.
  if (file === 'src/config.ts' || file === 'src/version.ts' || /^src\/domains\/[^/]+\/settings\.ts$/.test(file)) return 'config'
  // The descriptor contract names only config and data types: the build runner reads it, so it sits with data.
  if (file.startsWith('src/data/') || file.startsWith('src/stores/') || file === 'src/domains/types.ts') return 'data'
  // The operator API and console: an HTTP surface of its own beside /api/v1.
  if (file.startsWith('src/http/') || file.startsWith('src/admin/')) return 'http'
  // datasets/sources.ts lists the registry's sources: the registry's layer.
  if (file.startsWith('src/domains/') || file === 'datasets/sources.ts') return 'domains'
  if (['src/server.ts', 'src/serve.ts', 'src/supervisor.ts', 'src/refresh.ts'].includes(file)) return 'server'
  if (file.startsWith('src/cli/') || file === 'src/main.ts') return 'cli'
  if (/^(datasets|build|scripts)\//.test(file)) return 'tools'
  return undefined
}

const ownFiles = ['src', 'datasets', 'build', 'scripts'].flatMap((dir) =>
  [...new Bun.Glob(`${dir}/**/*.ts`).scanSync({ cwd: ROOT })].filter((f) => !f.endsWith('.d.ts') && !f.startsWith('datasets/out/')),
)

// `import … from '…'`, `export … from '…'` (over several lines too) and a bare `import '…'`, at the start of a line.
const IMPORT = /^[ \t]*(?:import|export)\b[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]|^[ \t]*import\s*['"]([^'"]+)['"]/gm

/** Each own file's relative imports that resolve to own TypeScript files (JSON and the vendored JS aside). */
const graph = new Map<string, string[]>(
  ownFiles.map((file) => {
    const targets = [...readFileSync(join(ROOT, file), 'utf8').matchAll(IMPORT)]
      .map((m) => (m[1] ?? m[2]) as string)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => relative(ROOT, resolve(ROOT, dirname(file), spec)))
      .flatMap((target) =>
        [target, `${target}.ts`, `${target}/index.ts`].filter((t) => t.endsWith('.ts') && existsSync(join(ROOT, t))).slice(0, 1),
      )
    return [file, targets]
  }),
)

const edges = [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })))
const domainOf = (file: string) => /^src\/domains\/([^/]+)\//.exec(file)?.[1]

test('the graph is read: every own file is found, and the imports resolve', () => {
  expect(graph.size).toBeGreaterThan(200)
  expect(edges.length).toBeGreaterThan(500)
  expect(graph.get('src/main.ts')).toContain('src/serve.ts')
})

test('every own source file belongs to a layer', () => {
  expect(ownFiles.filter((f) => !layerOf(f))).toEqual([])
})

test('no import circles', () => {
  // Tarjan's strongly connected components; each component of more than one file holds a circle.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v) as number)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number))
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop() as string
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) components.push(component)
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  // Name one circle of each component, a → b → … → a, found by a walk that stays inside the component.
  const circleIn = (component: string[]) => {
    const inside = new Set(component)
    const start = component[0] as string
    const path = [start]
    const seen = new Set([start])
    const walk = (v: string): boolean => {
      for (const w of graph.get(v) ?? []) {
        if (w === start) return true
        if (!inside.has(w) || seen.has(w)) continue
        seen.add(w)
        path.push(w)
        if (walk(w)) return true
        path.pop()
      }
      return false
    }
    walk(start)
    return [...path, start].join(' → ')
  }
  expect(components.map(circleIn)).toEqual([])
})

test('no domain imports another domain', () => {
  const crossings = edges.filter(({ from, to }) => domainOf(from) && domainOf(to) && domainOf(from) !== domainOf(to))
  expect(crossings.map(({ from, to }) => `${from} → ${to}`)).toEqual([])
})

test('no import runs back up the layers', () => {
  const rank = (file: string) => LAYERS.indexOf(layerOf(file) as Layer)
  const upward = edges.filter(({ from, to }) => rank(to) > rank(from))
  expect(upward.map(({ from, to }) => `${from} (${layerOf(from)}) → ${to} (${layerOf(to)})`)).toEqual([])
})

test("only a domain's descriptor imports its build (services read artifact names from artifacts.ts)", () => {
  const intoBuild = edges.filter(
    ({ from, to }) => domainOf(to) && to.endsWith('/build.ts') && !/\/(index|build|[a-z-]+-build)\.ts$/.test(from),
  )
  expect(intoBuild.map(({ from, to }) => `${from} → ${to}`)).toEqual([])
})

/** The request path's own files: every one is in a stage folder (docs/architecture.md, "How a request travels"). */
const httpFiles = ownFiles.filter((f) => f.startsWith('src/http/'))
const HTTP_STAGES = ['edge', 'routing', 'admission', 'credits', 'reply', 'endpoints']

test('every file of src/http is in one of the stages, and docs/architecture.md names each in its stage', () => {
  expect(httpFiles.filter((f) => !HTTP_STAGES.includes(f.split('/')[2]!) || f.split('/').length !== 4)).toEqual([])
  // The layout's tree: `    <stage>/` lines, each followed by its files' lines, `      <file>.ts  what it is`.
  const drawn = new Set<string>()
  let stage = ''
  for (const line of readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').split('\n')) {
    const folder = /^ {4}([a-z]+)\/\s/.exec(line)
    if (folder) stage = folder[1]!
    const file = /^ {6}([\w.-]+\.ts)\b/.exec(line)
    if (file && stage) drawn.add(`src/http/${stage}/${file[1]}`)
  }
  expect(httpFiles.filter((f) => !drawn.has(f) && !f.endsWith('.d.ts'))).toEqual([])
  expect([...drawn].filter((f) => !httpFiles.includes(f))).toEqual([])
})

test('one path matcher: only the route table imports route-match.ts; nothing else matches request paths', () => {
  const importers = edges.filter(({ to }) => to === 'src/http/routing/route-match.ts').map(({ from }) => from)
  expect(importers.filter((f) => !f.startsWith('test/'))).toEqual(['src/http/routing/route-table.ts'])
  // A matcher of its own would compile route patterns into regular expressions, or walk the app's routes.
  const own = ownFiles.filter((f) => f.startsWith('src/') && f !== 'src/http/routing/route-match.ts')
  const matching = own.filter((f) => /\.split\('\/'\)[\s\S]{0,200}startsWith\(':'\)/.test(readFileSync(join(ROOT, f), 'utf8')))
  expect(matching).toEqual(['src/http/routing/route-table.ts'])
})

test("Elysia's internals are read in one adapter only (routing/elysia-routes.ts)", () => {
  // What Elysia keeps of a route (`hooks`, the app's `routes` list and `server`) and its OpenAPI generator.
  const INTERNALS = /\.hooks\b|\.routes\b(?!\s*\()|\bapp\.server\b|\.server\s*=|toOpenAPISchema|\.router\b/
  const readers = ownFiles
    .filter((f) => f.startsWith('src/'))
    .filter((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .some((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && INTERNALS.test(line)),
    )
  expect(readers).toEqual(['src/http/routing/elysia-routes.ts'])
})
