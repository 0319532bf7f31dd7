/**
 * A Bible query worker (lib/query-pool.ts): opens its own read-only connection to bible.sqlite and runs
 * the searches priced too costly for the event loop. `build/compile.ts` adds every `*worker.ts` as an
 * entry point, so this file also exists inside the compiled executable.
 */
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { serveQueries } from '../../lib/query-thread.ts'
import { type BibleService, openBibleService } from './service.ts'

export interface BibleWorkerInit {
  path: string
  searchBudgetMs: number
}

serveQueries<BibleWorkerInit>(({ path, searchBudgetMs }) => {
  const service = openBibleService(openReadonlySqlite(path), { searchBudgetMs })
  return { search: (...args: Parameters<BibleService['search']>) => service.search(...args) }
})
