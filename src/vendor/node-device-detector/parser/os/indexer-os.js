// Almanac: the stock hash indexes are not shipped; the prefilter handed in through ../../matchers.js replaces them.
class IndexerOs {
  static findOsRegexPositionsForUserAgent() {
    return null;
  }
}

module.exports = IndexerOs;
