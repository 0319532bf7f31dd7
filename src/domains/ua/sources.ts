/**
 * Upstream of the ua domain: Matomo device-detector's own detection data, the YAML files of its
 * `regexes/` folder at one commit, each read from its raw GitHub URL and pinned by sha256 (the engine
 * code that reads them is vendored in `engine/`, MIT, from node-device-detector). ua-parser-js is not
 * used: its 2.x releases are AGPL-3.0 (its copyleft would reach this executable) and its model has no
 * bot category or producer and no desktop device type.
 */
import type { Source } from '../../data/types.ts'

/** The device-detector commit the data comes from (master after tag 6.5.1). */
export const MATOMO_COMMIT = '3856a28692d45317d3f15f6f81ca31a06067182a'
export const UA_DATA_VERSION = `6.5.1+${MATOMO_COMMIT.slice(0, 8)}`
// Commit date: the `X-Definitions-Updated` date of every ua answer.
export const UA_DATA_DATE = '2026-08-19'

/** `regexes/` files (path under regexes/ → sha256 at MATOMO_COMMIT). */
const FILES: [string, string][] = [
  ['bots.yml', 'b5b337e471a5a2e0246be456ca1bb7b9644139fe3aa13f0cf2e00d408ebd228b'],
  ['oss.yml', 'd2c3d088d5bc8b93a4f61f8ee7d9a8e1295e40fa90392918fdb4a9cf92c9217b'],
  ['vendorfragments.yml', '7e49f5990708c4d849f790b5ff04e26ecf4a7dcc31a215822e8584f194d23c7f'],
  ['client/browser_engine.yml', 'e34514728a4ba9751e96102726e3f7400c7f80db5b247a2e93f567c6a9a9c165'],
  ['client/browsers.yml', 'd2714ef80da510943283da533be0bd60e8feca6b70ca15d545665ae2c5cecdff'],
  ['client/feed_readers.yml', 'b720517d37d2d7fb2845630d8a957abfe20200254d93d295de88025ba3f88b4d'],
  ['client/libraries.yml', 'c08be3874ce93a61155b30e7dced198abbe4e481a8118c455312a6e722474052'],
  ['client/mediaplayers.yml', '5cfda935bdebba405dfea6df39e31b5c50e7d6a357a10e2a3beca192457fda1e'],
  ['client/mobile_apps.yml', '5876ba7eb7cc97a31859333f5c4df1df6ccf2505b0966a9ec510835b1c42dee1'],
  ['client/pim.yml', '05cc12efa1afa4c01119b159d55c0c543841f2a0bf1af50f667663a5bc3baaa3'],
  ['client/hints/apps.yml', '2da716ae5dd11bba3145585b43ccb5b49b29d7fcb881ae191d86cb04b22a1461'],
  ['client/hints/browsers.yml', '3bd21969026b0de6d6120bdf00a3555683fe87c6adab8e6deb42c288d1e6d327'],
  ['device/cameras.yml', '18cf615b99af9c583bb9b2f9fc3424b28abb9ffd9614c63320149067f9c031af'],
  ['device/car_browsers.yml', '889dce891765bb76e6b8bcd27b54155256f5ac9a105e84c591e5fe15f16f3784'],
  ['device/consoles.yml', 'd1094f0247a98f4b79e3d8c613764e24527c2b7d5c805790367da8dcd366fb51'],
  ['device/mobiles.yml', '22f8c06d436afb432a567fa64751d8e0d329ebd8e9a35b3d3a97a42f463c7850'],
  ['device/notebooks.yml', '02758311a62310d134a9448b652b81d34f403144b0152e159f1745adf81f081d'],
  ['device/portable_media_player.yml', '8fa5514f486b377e67cd1aa7e0a887a631a97c03334b75e4d58dce2f76ffcce6'],
  ['device/shell_tv.yml', '1be3b97ec589d4cf79be7ad32f9625f1e1ead343dacf7d88bdb0760542486a32'],
  ['device/televisions.yml', 'cdc0c06cc8471f4e77f95d9f93ec825b3daaaf00ba359511623d676d8ee36a0c'],
]

/** Source id of a `regexes/` file: `matomo-regexes-client-hints-apps` for `client/hints/apps.yml`. */
export const uaSourceId = (file: string) => `matomo-regexes-${file.replace(/\.yml$/, '').replace(/[/_]/g, '-')}`

/** The collection name the engine asks for (`client/hints/apps`) by source id. */
export const UA_COLLECTION_SOURCES: [collection: string, source: string][] = FILES.map(([file]) => [
  file.replace(/\.yml$/, ''),
  uaSourceId(file),
])

export const uaSources: Source[] = FILES.map(([file, sha256]) => ({
  id: uaSourceId(file),
  version: UA_DATA_VERSION,
  date: UA_DATA_DATE,
  mirror: `ua-regexes/${file}`,
  url: `https://raw.githubusercontent.com/matomo-org/device-detector/${MATOMO_COMMIT}/regexes/${file}`,
  sha256,
  homepage: 'https://github.com/matomo-org/device-detector',
  license: 'LGPL-3.0-or-later',
  attribution:
    `User-agent detection data: Matomo device-detector (https://github.com/matomo-org/device-detector), LGPL-3.0-or-later, commit ` +
    `${MATOMO_COMMIT.slice(0, 8)} of ${UA_DATA_DATE}.`,
  duties:
    'LGPL-3.0: the detection data is a separate dataset file (`ua-detection.json`) that an operator may replace with newer or ' +
    'modified data without rebuilding the executable (ALMANAC_UA_REGEXES; see docs/ua.md); pass on the LGPL-3.0 text and say where ' +
    'the data comes from.',
}))
