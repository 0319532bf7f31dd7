const matchers = require('../../matchers'); // Almanac: compiled, prefiltered regexes (matchers.js)
const ClientAbstractParser = require('./../client-abstract-parser');
const CLIENT_TYPE = require('./../const/client-type');
const BROWSER_FAMILIES = require('./browser-families');
const ArrayPath = require('./../../lib/array-path');
const helper = require('./../helper');
const BrowserHints = require('./hints/browser-hints');

const BROWSER_SHORT = helper.revertObject(require('./browser-short'));

// Almanac: buildName's and buildFamily's loops as lookups, built once (the first name or family in
// table order wins, as the loops returned the first).
const BROWSER_BY_LOWER_NAME = new Map();
for (const browser of Object.keys(BROWSER_SHORT)) {
  const lower = browser.toLowerCase();
  if (!BROWSER_BY_LOWER_NAME.has(lower)) BROWSER_BY_LOWER_NAME.set(lower, browser);
}
const FAMILY_BY_SHORT = new Map();
for (const browserFamily in BROWSER_FAMILIES) {
  if (!browserFamily || !BROWSER_FAMILIES[browserFamily]) continue;
  for (const short of BROWSER_FAMILIES[browserFamily]) {
    if (!FAMILY_BY_SHORT.has(short)) FAMILY_BY_SHORT.set(short, browserFamily);
  }
}

const CLIENTHINT_MAPPING = {
  'Chrome': ['Google Chrome'],
  'Chrome Webview': ['Android WebView'],
  'DuckDuckGo Privacy Browser': ['DuckDuckGo'],
  'Edge WebView': ['Microsoft Edge WebView2'],
  'Mi Browser': ['Miui Browser', 'XiaoMiBrowser'],
  'Microsoft Edge': ['Edge'],
  'Norton Private Browser': ['Norton Secure Browser'],
  'Opera GX':['Opera GX Android'],
  'Opera Mini': ['Opera Mini Android'],
  'Puffin Cloud Browser': ['Puffin'],
  'Vewd Browser': ['Vewd Core'],
  'Yandex Browser': ['YaSearchBrowser'],
};
// If client hints report the following browsers, we use the version from useragent
const BROWSERHINT_SKIP_VERSION = ['A0', 'AL', 'HP', 'JR', 'MU', 'OM', 'OP', 'VR'];

const compareBrandForClientHints = (brand) => {
  for (let brandName in CLIENTHINT_MAPPING) {
    for (let mapBrand of CLIENTHINT_MAPPING[brandName]) {
      if (brand.toLowerCase() === mapBrand.toLowerCase()) {
        return brandName;
      }
    }
  }
  return brand;
};

const extractBrandsForClientHints = (brands) => {
  if (!Array.isArray(brands)) {
    return [];
  }
  const hash = {};
  for (const item of brands) {
    if (item.brand && item.version !== undefined) {
      hash['' + item.brand] = '' + item.version;
    }
  }
  const result = [];
  for (const brand in hash) {
    result.push({
      brand: brand, version: hash[brand]
    })
  }
  return result;
}

class Browser extends ClientAbstractParser {
  constructor() {
    super();
    this.engine_collection = require('../../data').collection('client/browser_engine');
    this.collection = require('../../data').collection('client/browsers');
    // Almanac: one per parser, built with the parser once the detection data is handed in (data.js).
    this.browserHints = new BrowserHints();
    this.type = CLIENT_TYPE.BROWSER;
    this.collectionLength = this.collection.length;
  }

  getCollectionBrowsers() {
    return BROWSER_SHORT;
  }

  getAvailableBrowsers() {
    return Object.keys(this.getCollectionBrowsers());
  }

  /**
   * Generates the result for the parse method
   *
   * @param {string} userAgent
   * @param {ResultClient} data
   * @param {ResultInlineClientHint} hint
   * @param {ResultHashHint} hash
   * @returns {null|ResultClient}
   */
  prepareParseResult(
    userAgent,
    data,
    hint,
    hash
  ) {

    let type = CLIENT_TYPE.BROWSER;
    let name = '';
    let version = '';
    let engine = '';
    let engineVersion = '';
    let short = '';
    let family = '';

    // use client hints in favor of user agent data if possible
    if (hint && hint.name && hint.version) {
      name = hint.name;
      version = String(hint.version);
      short = hint.short_name;
      engine = String(hint?.engine || '');
      engineVersion = String(hint?.engine_version || '');
      family = this.buildFamily(short);

      // If the version reported from the client hints is YYYY or YYYY.MM (e.g., 2022 or 2022.04),
      // then it is the Iridium browser
      // https://iridiumbrowser.de/news/
      if (/^202[0-4]/.test(version)) {
        name = 'Iridium';
        short = 'I1';
      }

      if (data) {
        // https://bbs.360.cn/thread-16096544-1-1.html
        if (/^15/.test(version) && /^114/.test(data.version)) {
          name          = '360 Secure Browser';
          short         = '3B';
          engine        = data.engine;
          engineVersion = data.engine_version;
        }

        // If client hints report the following browsers, we use the version from useragent
        if (data.version && BROWSERHINT_SKIP_VERSION.indexOf(short) !== -1) {
          version = data.version;
        }

        if ('Vewd Browser' === name) {
          engine = data.engine;
          engineVersion = data.engine_version;
        }

        if ('Blink' === engine && 'Iridium' !== name) {
          if (data.engine_version && engineVersion && helper.versionCompare(data.engine_version, engineVersion) > 0) {
            engineVersion = data.engine_version;
          }
        }


        // If client hints report Chromium, but user agent detects a Chromium based browser, we favor this instead
        const hasChromeBased =  ('Chromium' === name || 'Chrome Webview' === name)
          && data.name
          && ['CR', 'CV', 'AN', 'CM'].indexOf(data.short_name) === -1;

        if (hasChromeBased) {
          name = data.name;
          short = data.short_name;

          if(parseInt(data.version) !== parseInt(version) || helper.versionCompare(version, data.version) <= 0) {
            version = data.version;
          }
        }

        // Fix mobile browser names e.g. Chrome => Chrome Mobile
        if (name + ' Mobile' === data.name) {
          name = data.name;
          short = data.short_name;
        }
        // If user agent detects another browser, but the family matches, we use the detected engine from user agent
        if (name !== data.name && family === this.buildFamily(data.short_name)) {
          engine = data.engine;
          engineVersion = data.engine_version;
        }
        // If the browser name matches the client hints then browser engine overwrite
        if (name === data.name) {
          engine = data.engine;
          engineVersion = data.engine_version;
        }
        // In case the user agent reports a more detailed version, we try to use this instead
        if (data.version && data.version.indexOf(version) === 0 && helper.versionCompare(version, data.version) < 0) {
          version = data.version;
        }
      }


      // If DDG Private browser then set version empty string
      if ('DuckDuckGo Privacy Browser' === name) {
        version = '';
      }

      // In case client hints report a more detailed engine version, we try to use this instead
      if ('Blink' === engine && 'Iridium' !== name) {
        if (
          hint.version &&
          engineVersion &&
          helper.versionCompare(engineVersion, hint.version) < 0
        ) {
          engineVersion = hint.version;
        }

        if (
          data !== null &&
          hint.engine_version &&
          data.engine_version &&
          helper.versionCompare(data.engine_version, hint.engine_version) < 0
        ) {
          engineVersion = hint.engine_version;
        }
      }


    } else if (data !== null) {
      name = data.name;
      version = data.version;
      short = data.short_name;
      engine = data.engine;
      engineVersion = data.engine_version;
    }

    family = this.buildFamily(short);

    // is app id
    if (hash !== null && name !== hash.name) {
      name = hash.name;
      version = '';
      short = this.buildShortName(name);

      if (/Chrome\/.+ Safari\/537.36/.test(userAgent)) {
        engine = 'Blink';
        family = this.buildFamily(short) || 'Chrome';
        engineVersion = this.buildEngineVersion(userAgent, engine);
      }
    }
    // exclude Blink engine version for browsers
    if ('Blink' === engine && 'Flow Browser' === name) {
      engineVersion = '';
    }
    // the browser simulate ua for Android OS
    if ('Every Browser' === name) {
      family = 'Chrome';
      engine = 'Blink';
      engineVersion = '';
    }
    // This browser simulates user-agent of Firefox
    if ('TV-Browser Internet' === name && 'Gecko' === engine) {
      family = 'Chrome';
      engine = 'Blink';
      engineVersion = '';
    }
    // This browser correct family by browser engine
    if (['Yaani Browser', 'Wolvic'].includes(name)) {
      if ('Blink' === engine) {
        family = 'Chrome';
      }
      if ('Gecko' === engine) {
        family = 'Firefox';
      }
    }

    if (name === '') {
      return null;
    }

    return {
      type: String(type),
      name: String(name),
      short_name: String(short),
      version: String(version),
      engine: String(engine),
      engine_version: String(engineVersion),
      family: String(family)
    };
  }

  // Almanac: see ParserAbstract.indexes. The browsers and their engines.
  indexes() {
    return [...super.indexes(), () => matchers.listIndex(this.engine_collection)];
  }

  /**
   * General method for parsing user-agent and client-hints
   *
   * @param {string} userAgent
   * @param {ResultClientHints} clientHints
   * @returns {ResultClient|null}
   */
  parse(userAgent, clientHints) {
    const ua = '' + this.prepareUserAgent(userAgent);
    const hash = this.parseFromHashHintsApp(clientHints);
    const hint = this.parseFromClientHints(clientHints);
    const data = this.parseFromUserAgent(ua, clientHints);
    return this.prepareParseResult(ua, data, hint, hash);
  }

  /**
   * Parses client-hints for getting the browser name from the application ID (clientHints.app)
   *
   * @param {ResultClientHints} clientHints
   * @return {ResultHashHint}
   */
  parseFromHashHintsApp(clientHints) {
    return this.browserHints.parse(clientHints);
  }

  /**
   * Parses client-hints for getting browser name, version, short name
   *
   * @param {ResultClientHints} clientHints
   * @return {ResultInlineClientHint}
   */
  parseFromClientHints(clientHints) {
    let name = '', short = '', version = '', engine = '', engineVersion = '';

    if (clientHints && clientHints.client) {
      const brands = extractBrandsForClientHints(
        ArrayPath.get(clientHints, 'client.brands', [])
      );

      const engineBrands = ['Android WebView', 'Chromium'];
      for (let brandItem of brands) {
        if (engineBrands.indexOf(brandItem.brand) !== -1) {
          engine = 'Blink';
          engineVersion = brandItem.version;
          break;
        }
      }

      for (let brandItem of brands) {
        let brand = compareBrandForClientHints(brandItem.brand);
        for (let browserName in this.getCollectionBrowsers()) {
          let shortName = this.getCollectionBrowsers()[browserName];
          let found = helper.fuzzyCompare(brand, browserName)
            || helper.fuzzyCompare(`${brand} Browser`, browserName)
            || helper.fuzzyCompare(brand, browserName + ' Browser');

          if (found) {
            if ('Chrome' === name && 'Chromium' === browserName) {
              break;
            }

            name = String(browserName);
            short = String(shortName);
            version = String(brandItem.version);
            break;
          }
        }

        // If we detected a brand, that is not in the array, we will use it, otherwise we will look further
        if (['', 'Chrome', 'Chromium', 'Microsoft Edge'].indexOf(name) === -1) {
          break;
        }
      }

      if (clientHints.client.version) {
        version = String(clientHints.client.version);
      }
    }

    return {
      name: name,
      short_name: short,
      version: this.buildVersion(version, []),
      engine: engine,
      engine_version: engineVersion
    };
  }

  /**
   * Inline parse userAgent by position collection
   *
   * @param {string} userAgent
   * @param {number} position
   * @param {*} matcher - Almanac: the entry's Matcher when the caller has it (from matchers.listIndex)
   * @return {ResultClient|null}
   */
  parseUserAgentByPosition(userAgent, position = 0, matcher = null) {
    let item = this.collection[position];
    if (item === void 0) {
      return null;
    }

    let regex = matcher || this.getBaseRegExp(item.regex);
    let match = regex.exec(userAgent);

    if (match !== null) {
      let name = this.buildByMatch(item.name, match);
      name = this.buildName(name);
      let version = this.buildVersion(item.version, match);

      let short = this.buildShortName(name);
      let engine = this.buildEngine(
        item.engine !== void 0 ? item.engine : {},
        version
      );
      if (engine === '') {
        engine = this.parseEngine(userAgent);
      }

      let engineVersion = this.buildEngineVersion(userAgent, engine);
      let family = this.buildFamily(short);

      return {
        name: name,
        short_name: String(short),
        version: version,
        engine: String(engine),
        engine_version: String(engineVersion),
        family: family
      };
    }

    return null;
  }

  /**
   * Base result data
   * @param userAgent
   * @return {ResultClient|null}
   */
  parseFromUserAgent(userAgent) {
    if (!userAgent) {
      return null;
    }
    return super.parse(userAgent, {});
  }

  /**
   *  normalisation browser name from any case
   *
   * @param {string} name
   * @returns {string}
   */
  buildName(name) {
    let result = name;
    let normalName = this.getCollectionBrowsers()[name];
    if (normalName === void 0) {
      const found = BROWSER_BY_LOWER_NAME.get(name.toLowerCase());
      if (found !== void 0) {
        result = found;
      }
    }
    return result;
  }

  /**
   * Get short code browser for full name browser
   *
   * @param {string} name
   * @return {string}
   */
  buildShortName(name) {
    const UNKNOWN = 'UNK';
    let result = this.getCollectionBrowsers()[name];
    if (result !== void 0) {
      return result;
    }
    return UNKNOWN;
  }

  /**
   * Get browser family for short name browser
   *
   * @param {string} shortName
   * @returns {string}
   */
  buildFamily(shortName) {
    const family = FAMILY_BY_SHORT.get(shortName);
    return family !== void 0 ? family : '';
  }

  /**
   * Get browser engine for engine name and versions
   *
   * @param {string} engine
   * @param {string} browserVersion
   * @return {string}
   */
  buildEngine(engine, browserVersion) {
    let result = '';
    if (engine.hasOwnProperty('default') && engine.default !== '') {
      result = engine.default;
    }
    if (engine.hasOwnProperty('versions')) {
      let versions = Object.keys(engine.versions).sort(helper.versionCompare);
      for (let i = 0, l = versions.length; i < l; i++) {
        if (
          browserVersion !== '' &&
          helper.versionCompare(browserVersion, versions[i]) >= 0
        ) {
          result = engine.versions[versions[i]];
        }
      }
    }
    return result;
  }

  /**
   * Get engine name for parser engines
   *
   * @param {string} userAgent
   * @returns {string}
   */
  parseEngine(userAgent) {
    let result = '';
    // Almanac: only the engines whose literals occur in the user agent, in list order, each with its Matcher.
    const index = matchers.listIndex(this.engine_collection);
    const candidates = index.candidates(userAgent);
    for (let c = 0, l = candidates.length; c < l; c++) {
      let item = this.engine_collection[candidates[c]];
      let regex = index.matchers[candidates[c]];
      let match = regex.exec(userAgent);
      if (match !== null) {
        result = item.name;
        break;
      }
    }
    return result;
  }

  /**
   * Get engine version for useragent and engine name
   *
   * @param {string} userAgent
   * @param {string} engine
   * @return {string}
   */
  buildEngineVersion(userAgent, engine) {
    if (engine === '') {
      return '';
    }
    if (engine === 'Gecko' || engine === 'Clecko') {
      let pattern = '[ ](?:rv[: ])([0-9.]+)';
      let regexp = matchers.fixedRegExp(pattern);
      let match = regexp.exec(userAgent);
      if (match !== null && /(?:g|cl)ecko\/[0-9]{8,10}/i.test(userAgent)) {
        return match[1];
      }
    }

    let engineToken = '' + engine;

    if ('Blink' === engine) {
      engineToken = 'Chr[o0]me|Chromium|Cronet';
    }

    if ('LibWeb' === engine) {
      engineToken = 'LibWeb\\+LibJs\\/';
    }

    if ('Arachne' === engine) {
      engineToken = 'Arachne\\/5\\.';
    }

    let regexp = matchers.fixedRegExp(
      '(?:' + engineToken + ')' +
      '\\s*[/_]?\\s*(((?=\\d+\\.\\d)\\d+[.\\d]*|\\d{1,7}(?=(?:\\D|$))))'
    );

    let match = regexp.exec(userAgent);
    if (match !== null) {
      return match[1]
    }

    return '';
  }
}

module.exports = Browser;
