/**
 * Which route patterns a raw path matches: the route table's one matcher (route-table.ts), which resolves
 * each request once. A pattern matches with or without a trailing slash (`/countries/` answers
 * `/countries`); a bare `/*` catch-all matches nothing here.
 *
 * Results are cached by the path's shape, not the raw path: each segment that is a literal of some
 * pattern stays, any other becomes one placeholder, and segments past the deepest pattern are cut. Which
 * patterns match depends only on that shape, and the number of shapes is bounded by the patterns, so
 * clients sending arbitrary paths (up to 16 KB each) cannot grow the cache. A smaller cache of raw paths
 * sits in front, bounded in entries and bytes.
 */
import { GenerationalCache } from '../../lib/cache.ts'

export interface RouteMatch {
  method: string
  /** The pattern without its trailing slash (`/api/v1/countries/:code`). */
  path: string
}

/** Stands for a non-empty segment that no pattern names literally (a path segment cannot hold it raw). */
const OTHER = '\u0000'

interface Compiled {
  patterns: (RouteMatch & { pattern: RegExp })[]
  literals: Set<string>
  /** Segments a path may have and still match a pattern without a wildcard (a trailing slash included). */
  depth: number
}

function compile(routes: readonly { method: string; path: string }[], extraLiterals: Iterable<string>): Compiled {
  const literals = new Set<string>(extraLiterals)
  let depth = 0
  const patterns = routes
    .filter((r) => !r.path.endsWith('*') || r.path.length > 2)
    .map((r) => {
      const trimmed = r.path.length > 1 ? r.path.replace(/\/+$/, '') : r.path
      const segments = trimmed.split('/').slice(1)
      depth = Math.max(depth, segments.length + 1)
      for (const s of segments) if (!s.startsWith(':') && s !== '*') literals.add(s)
      const source = segments
        .map((s) => (s.startsWith(':') ? '[^/]+' : s === '*' ? '.*' : s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')
      return { method: r.method, path: trimmed, pattern: new RegExp(`^/${source}/?$`) }
    })
  return { patterns, literals, depth }
}

/** The path with every segment no pattern names replaced by OTHER, cut after `depth + 1` segments. */
function shapeOf(path: string, { literals, depth }: Compiled): string {
  const segments = path.split('/', depth + 2).slice(1)
  return '/' + segments.map((s) => (s === '' || literals.has(s) ? s : OTHER)).join('/')
}

/**
 * `literals`: segments to keep in a path's shape besides those the patterns name (the domains' prefixes, so
 * that a path's owner is part of its shape even where no route names its prefix).
 */
export function routeMatcher(
  routes: readonly { method: string; path: string }[],
  literals: Iterable<string> = [],
): (path: string) => RouteMatch[] {
  const compiled = compile(routes, literals)
  const byShape = new GenerationalCache<string, RouteMatch[]>(4096)
  // In front, the raw paths seen lately: most requests repeat a path (`/ip`, `/countries/FR`), and a Map
  // lookup is cheaper than cutting the path into its shape (~1 µs a request). Bounded in entries and bytes,
  // as the paths are the clients' text; the lists are shared with byShape, so there is no copy.
  const byPath = new GenerationalCache<string, RouteMatch[]>(4096, 4 * 1024 * 1024, (path) => 64 + 2 * path.length)
  return (path) => {
    let found = byPath.get(path)
    if (found) return found
    const shape = shapeOf(path, compiled)
    found = byShape.get(shape)
    if (!found)
      byShape.set(shape, (found = compiled.patterns.filter((r) => r.pattern.test(shape)).map(({ method, path }) => ({ method, path }))))
    byPath.set(path, found)
    return found
  }
}
