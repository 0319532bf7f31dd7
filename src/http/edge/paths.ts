/**
 * The API's URL prefix and the path of a request URL, shared by every layer that looks at paths.
 *
 * Bun hands the app `http://<Host header><target>`, or the bare target when the Host header is empty or
 * invalid. Elysia's router cuts the path at a fixed offset into the URL; by default 11 (it assumes a host
 * of at least four characters), so with `Host: ab` it routed `/z/api/v1/...` as `/api/v1/...` while the
 * auth check saw `/z/...`. server.ts sets `standardHostname: false` (offset 7, right after `http://`) and
 * `pathStart` below cuts at the same place, so routing, auth, quota and metrics decide from one path; a URL
 * without a host is refused before routing.
 */

export const API_PREFIX = '/api/v1'

/** Whether a path is under the API (authenticated, counted). */
export const isApi = (path: string) => path === API_PREFIX || path.startsWith(API_PREFIX + '/')

/** Index where a request URL's path starts, where Elysia's router starts it; -1 when the URL names no host. */
export function pathStart(url: string): number {
  if (!url.startsWith('http://')) return -1
  const start = url.indexOf('/', 7)
  return start > 7 ? start : -1
}

/** The path of a request URL, without its query string (a hostless URL's own target; `/` when it has none). */
export function pathOf(url: string): string {
  let start = pathStart(url)
  if (start < 0) start = url.startsWith('/') ? 0 : url.length
  const q = url.indexOf('?', start)
  const path = q < 0 ? url.slice(start) : url.slice(start, q)
  return path || '/'
}
