// Almanac: the stock hash indexes are not shipped; the prefilter handed in through ../../matchers.js replaces them.
class IndexerClient {
  static findClientRegexPositionsForUserAgent() {
    return null;
  }
}

module.exports = IndexerClient;
