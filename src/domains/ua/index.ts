/**
 * The ua domain: Matomo device-detector answers (client, OS, device, bot) with Client Hints, from the
 * vendored node-device-detector engine made fast by compiled, literal-prefiltered regexes.
 */
import { existsSync, readFileSync } from 'node:fs'
import { defineDomain } from '../types.ts'
import { uaSettings } from './settings.ts'
import { UA_ARTIFACT, uaBuilder } from './build.ts'
import { describeFolder, folderFiles, loadDefinitions, readDefinitions, sameOrRead } from './definitions.ts'
import { uaRoutes } from './routes.ts'
import { openUaService, type UaService } from './service.ts'
import { uaSources } from './sources.ts'

/** Folder name under the data directory for newer detection data. */
export const DROP_IN = 'ua-regexes'

export default defineDomain<UaService>({
  name: 'ua',
  tag: {
    name: 'ua',
    description:
      'User agents parsed as Matomo device-detector does: the client, operating system, device (type, brand, model) and bots, with ' +
      "Client Hints taken into account. One at a time (the request's own header, or a posted string) or in bulk.",
  },
  settings: uaSettings,
  prefixes: ['/ua'],
  datasets: ['ua'],
  open({ config, data, log }) {
    // An operator's newer detection data wins over the built artifact (docs/ua.md, "Newer detection data"):
    // the folder ALMANAC_UA_REGEXES names, else a `ua-regexes` folder dropped into the data directory.
    const dropped = data.path(DROP_IN)
    const dir = config.ua.regexesDir ?? (existsSync(dropped) ? dropped : undefined)
    let defs
    if (dir) {
      const files = folderFiles(dir)
      const source = describeFolder(dir, files)
      const texts = Object.fromEntries(Object.entries(files).map(([name, f]) => [name, readFileSync(f, 'utf8')])) as typeof files
      defs = sameOrRead([...Object.values(texts), JSON.stringify(source)], () => readDefinitions(files, source, texts))
    } else {
      const bytes = readFileSync(data.path(UA_ARTIFACT))
      defs = sameOrRead([bytes], () => loadDefinitions(data.path(UA_ARTIFACT), bytes))
    }
    if (dir) log.info(`serving detection data from ${dir}`, { domain: 'ua', ...defs.source })
    return openUaService(defs, { cacheEntries: config.ua.cacheEntries, cacheBytes: config.ua.cacheBytes })
  },
  routes: uaRoutes,
  warmUp: (service) => service.warmUp,
  definitionsUpdated: ({ service }) => service.definitions.date,
  builders: [uaBuilder],
  sources: uaSources,
  docs: 'docs/ua.md',
  probes: 'test/domains/ua/probes.ts',
})
