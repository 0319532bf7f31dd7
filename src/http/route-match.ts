/**
 * Which route patterns a raw path matches, for answers given without Elysia's router: the `Allow` list of
 * a 405 and the metrics label of a request no route hook saw. A pattern matches with or without a trailing
 * slash (`/countries/` answers `/countries`); a bare `/*` catch-all matches nothing here. Compiled on first
 * use; results kept per path, bounded, as clients send arbitrary paths (one scan of every pattern ~3 µs).
 */
export interface RouteMatch {
  method: string
  /** The pattern without its trailing slash (`/api/v1/countries/:code`). */
  path: string
}

export function routeMatcher(routes: () => readonly { method: string; path: string }[]): (path: string) => RouteMatch[] {
  let compiled: (RouteMatch & { pattern: RegExp })[] | undefined
  const byPath = new Map<string, RouteMatch[]>()
  return (path) => {
    let found = byPath.get(path)
    if (found) return found
    compiled ??= routes()
      .filter((r) => !r.path.endsWith('*') || r.path.length > 2)
      .map((r) => {
        const trimmed = r.path.length > 1 ? r.path.replace(/\/+$/, '') : r.path
        const source = trimmed.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')
        return { method: r.method, path: trimmed, pattern: new RegExp(`^${source}/?$`) }
      })
    found = compiled.filter((r) => r.pattern.test(path)).map(({ method, path }) => ({ method, path }))
    if (byPath.size >= 10_000) byPath.clear()
    byPath.set(path, found)
    return found
  }
}
