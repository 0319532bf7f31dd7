// Almanac: the stock hash indexes are not shipped; the prefilter in ../../data.js replaces them.
class IndexerOs {
  static findOsRegexPositionsForUserAgent() {
    return null;
  }
}

module.exports = IndexerOs;
