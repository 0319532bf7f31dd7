/**
 * Upstream of the ua domain: the detection regexes of Matomo device-detector, as converted and shipped
 * in the npm package node-device-detector (its `regexes/` folder; the engine code is vendored in
 * `engine/`, MIT). ua-parser-js is not used: its 2.x releases are AGPL-3.0 (its copyleft would reach
 * this executable) and its model has no bot category or producer and no desktop device type.
 */
import type { Source } from '../../data/types.ts'

export const UA_PACKAGE_VERSION = '2.2.7'

export const uaSources: Source[] = [
  {
    id: 'node-device-detector-regexes',
    version: UA_PACKAGE_VERSION,
    // npm publication of node-device-detector 2.2.7: the `X-Definitions-Updated` date of every ua answer.
    date: '2026-08-07',
    npm: { package: 'node-device-detector', path: 'regexes' },
    homepage: 'https://github.com/sanchezzzhak/node-device-detector',
    license: 'LGPL-3.0-or-later (Matomo device-detector regexes); MIT (node-device-detector code)',
    attribution:
      'User-agent detection data: Matomo device-detector (https://github.com/matomo-org/device-detector), LGPL-3.0-or-later, as converted by node-device-detector (https://github.com/sanchezzzhak/node-device-detector, MIT) by sanchezzzhak.',
    duties:
      'LGPL-3.0: the detection data is a separate dataset file (`ua-detection.json`) that an operator may replace with newer or modified data without rebuilding the executable (ALMANAC_UA_REGEXES; see docs/ua.md); pass on the LGPL-3.0 text and say where the data comes from.',
  },
]
