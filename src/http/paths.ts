/** The API's URL prefix and the path of a request URL, shared by every layer that looks at paths. */

export const API_PREFIX = '/api/v1'

/** Whether a path is under the API (authenticated, counted). */
export const isApi = (path: string) => path === API_PREFIX || path.startsWith(API_PREFIX + '/')

/** The path of an absolute URL, without its query string (`/` when it has none). */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start < 0) return '/'
  const q = url.indexOf('?', start)
  return q < 0 ? url.slice(start) : url.slice(start, q)
}
