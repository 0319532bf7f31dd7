/**
 * A postal query worker (lib/query-pool.ts): opens its own read-only connection to postal.sqlite and runs
 * the searches, radius and polygon queries whose inline work budget ran out, under the whole budget, and
 * presents their pages in the caller's form.
 * `build/compile.ts` adds every `*worker.ts` as an entry point, so this file also exists inside the
 * compiled executable.
 */
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { serveQueries } from '../../lib/query-thread.ts'
import type { ResponseForm } from '../../http/reply/reply.ts'
import { presentPageJson } from './present.ts'
import { type Heavy, type PostalService, openPostalService } from './service.ts'

export interface PostalWorkerInit {
  path: string
  workBudget: number
}

serveQueries<PostalWorkerInit>(({ path, workBudget }) => {
  const service = openPostalService(openReadonlySqlite(path), {}, workBudget)
  return {
    search: (...args: Parameters<PostalService['search']>) => service.search(...args),
    nearby: (...args: Parameters<PostalService['nearby']>) => service.nearby(...args),
    within: (...args: Parameters<PostalService['within']>) => service.within(...args),
    // What the routes ask for: the page in the caller's form, as JSON text (present.ts).
    presented: <M extends Heavy>(form: ResponseForm, method: M, args: Parameters<PostalService[M]>) =>
      presentPageJson(service.heavy(method, args), form),
  }
})
