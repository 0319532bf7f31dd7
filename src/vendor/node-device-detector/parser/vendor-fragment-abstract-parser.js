const ParserAbstract = require('./abstract-parser');
const helper = require('./helper');

const COLLECTION_BRAND_LIST = helper.revertObject(
    require('./device/brand-short')
);

const matchers = require('../matchers'); // Almanac: compiled, prefiltered regexes (matchers.js)

// Almanac: the fragment list of each collection, made once: its list index is kept by the list's identity
// (matchers.listIndex), so a detector built again over the same data must get the same list.
const FRAGMENTS = new WeakMap();

class VendorFragmentAbstractParser extends ParserAbstract {
  constructor() {
    super();
    this.collection = require('../data').collection('vendorfragments');
    // Almanac: every brand's fragments as one list, in the order the stock loops visit them (brands in
    // `for…in` order, then each brand's fragments), each pattern string built once.
    let fragments = FRAGMENTS.get(this.collection);
    if (fragments === void 0) {
      fragments = [];
      for (let cursor in this.collection) {
        for (const item of this.collection[cursor]) {
          fragments.push({ regex: item + '[^a-z0-9]+', name: String(cursor) });
        }
      }
      FRAGMENTS.set(this.collection, fragments);
    }
    this.fragments = fragments;
  }

  // Almanac: see ParserAbstract.indexes.
  indexes() {
    return [() => matchers.listIndex(this.fragments)];
  }

  /**
   * @param {string} userAgent
   * @returns {ResultVendor|null}
   */
  parse(userAgent) {
    // Almanac: only the fragments whose literals occur in the user agent, in that order; the first match wins.
    const index = matchers.listIndex(this.fragments);
    for (const i of index.candidates(userAgent)) {
      if (index.matchers[i].exec(userAgent) !== null) {
        let name = this.fragments[i].name;
        let brandId = COLLECTION_BRAND_LIST[name];
        return {
          name: name,
          id: brandId !== void 0 ? brandId : '',
        };
      }
    }
    return null;
  }
}

module.exports = VendorFragmentAbstractParser;
