const matchers = require('../matchers'); // Almanac: compiled, prefiltered regexes (matchers.js)
const ParserAbstract = require('./abstract-parser');

const helper = require('./helper');

const COLLECTION_BRAND_IDS =  require('./device/brand-short');
const COLLECTION_BRAND_LIST = helper.revertObject(COLLECTION_BRAND_IDS);

class DeviceParserAbstract extends ParserAbstract {
  constructor() {
    super();
    this.resultModelRegex = false; // used in tests
  }

  getAvailableBrands() {
    return Object.keys(this.getCollectionBrands());
  }

  getCollectionBrands() {
    return COLLECTION_BRAND_LIST;
  }

  /**
   * @param {string} userAgent
   * @param {string[]} brandIndexes
   * @returns {[]}
   */
  parseAll(userAgent, brandIndexes = []) {
    return this.#parse(userAgent, false, brandIndexes);
  }

  /**
   * iteration item parse, see __parse
   * @param {string} cursor
   * @param {string} userAgent
   * @param {*} brandMatcher - Almanac: the brand's Matcher when the caller has it (from matchers.keyIndex)
   * @return {{model: *, id: *, type, brand}|null}
   * @private
   */
  #parseForBrand(cursor, userAgent, brandMatcher = null) {
    let item = this.collection[cursor];
    if (item === void 0) {
      return null;
    }
    
    let model = '';
    let deviceType = '';
    let brandName = '';
    let regex = item['regex'];
    
    let match = (brandMatcher || this.getBaseRegExp(regex)).exec(userAgent);

    if (match) {
      brandName = String(cursor).trim();
      if (brandName === 'Unknown') {
        brandName = '';
      }
      if (item['device'] !== void 0) {
        deviceType = item['device'];
      }
      if (item['models'] !== void 0) {
        let models = item['models'];
        // Almanac: only the models whose literals occur in the user agent, in list order, each with its Matcher.
        const index = matchers.listIndex(models);
        const candidates = index.candidates(userAgent);
        for (let c = 0, l = candidates.length; c < l; c++) {
          let data = models[candidates[c]];
          regex = data.regex;
          let modelMatch = index.matchers[candidates[c]].exec(userAgent);
          if (modelMatch) {
            model = this.buildModel(data.model, modelMatch);
            if (data.device !== void 0) {
              deviceType = data.device;
            }
            if (data.brand !== void 0) {
              brandName = data.brand;
            }
            break;
          }
        }
      } else if (item['model'] !== void 0) {
        model = this.buildModel(item['model'], match);
      }
      let brandId = this.getBrandIdByName(brandName);
      let result = {
        id: brandId !== void 0 ? brandId : '',
        brand: brandName,
        model: model ? String(model).trim() : '',
        type: deviceType,
      };
      if (this.resultModelRegex) {
        result.regex = regex;
      }
      return result;
    }

    return null;
  }

  /**
   * iterations parse for collection
   * @param {string} userAgent
   * @param {boolean} canBreak
   * @param {string[]} brandIndexes
   * @return {[]}
   * @private
   */
  #parse(userAgent, canBreak = true, brandIndexes = []) {

    const output = [];
    if (brandIndexes.length) {
      for (let cursorId of brandIndexes) {
        const cursor = this.getBrandNameById(cursorId);
        const result = this.#parseForBrand(cursor, userAgent);
        if (result === null) {
          continue;
        }
        output.push(result);
        if (canBreak) break;
      }
    }

    if (!output.length) {
      // Almanac: only the brands whose literals occur in the user agent, in `for…in` order, each with its Matcher.
      const brands = matchers.keyIndex(this.collection);
      for (const i of brands.candidates(userAgent)) {
        const result = this.#parseForBrand(brands.keys[i], userAgent, brands.matchers[i]);
        if (result === null) {
          continue;
        }
        output.push(result);
        if (canBreak) break;
      }
    }

    return output;
  }

  /**
   * Almanac: Matomo's preMatchOverall (Console, CarBrowser, Camera, PortableMediaPlayer): whether any
   * brand regex of the list matches the user agent as sent, before a Client Hints model is written into
   * it. Matomo runs these parsers only then, so a Windows UA hinting the model `Xbox` is not a console.
   * @param {string} userAgent - the user agent as sent
   * @return {boolean}
   */
  preMatchOverall(userAgent) {
    userAgent = this.prepareUserAgent(userAgent);
    const brands = matchers.keyIndex(this.collection);
    for (const i of brands.candidates(userAgent)) {
      if (brands.matchers[i].exec(userAgent)) return true;
    }
    return false;
  }

  // Almanac: see ParserAbstract.indexes. The brands, and each brand's models (asked for once its regex matched).
  indexes() {
    const out = [() => matchers.keyIndex(this.collection)];
    for (const brand of Object.values(this.collection)) {
      if (brand.models !== void 0) out.push(() => matchers.listIndex(brand.models));
    }
    return out;
  }

  /**
   * Result brand and model
   * @param {string} userAgent    - useragent string
   * @param {array} brandIndexes  - check the devices in this list
   * @return {{model: (string|string), id: (*|string), type: string, brand: string}|null}
   */
  parse(userAgent, brandIndexes = []) {
    userAgent = this.prepareUserAgent(userAgent);
    let result = this.#parse(userAgent, true, brandIndexes);
    if (result.length) {
      // if it is fake device iphone/ipad then result empty
      if (result[0].brand === 'Apple' && /android /i.test(userAgent)) {
        return {
          id: '',
          brand: '',
          model: '',
          type: '',
        };
      }

      return result[0];
    }
    return null;
  }

  /**
   * get brand short id by name
   * @param {string} brandName
   * @return {string|void}
   */
  getBrandIdByName(brandName) {
    return COLLECTION_BRAND_LIST[brandName];
  }

  /**
   * get brand name by short id
   * @param {string} id
   * @return {string|void}
   */
  getBrandNameById(id) {
    return COLLECTION_BRAND_IDS[id];
  }
}

module.exports = DeviceParserAbstract;
