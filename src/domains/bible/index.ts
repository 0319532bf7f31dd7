/** Bible: 34 translations in 28 languages, chapters and verses, FTS5 search, verse of the day. */
import { openReadonlySqlite } from '../../data/sqlite.ts'
import { defineDomain } from '../types.ts'
import { BIBLE_ARTIFACT, bibleBuilder } from './build.ts'
import { bibleRoutes } from './routes.ts'
import { BibleService } from './service.ts'
import { bibleSources } from './sources.ts'

export default defineDomain<{ service: BibleService; close(): void }>({
  name: 'bible',
  prefixes: ['/bible'],
  datasets: ['bible'],
  open: ({ data }) => {
    const db = openReadonlySqlite(data.path(BIBLE_ARTIFACT))
    return { service: new BibleService(db), close: () => db.close() }
  },
  routes: ({ service, config }) => bibleRoutes(service.service, config),
  close: (opened) => opened.close(),
  builders: [bibleBuilder],
  sources: bibleSources,
  docs: 'docs/bible.md',
})
