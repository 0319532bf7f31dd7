// Almanac: the stock hash indexes are not shipped; the prefilter in ../../data.js replaces them.
class IndexerClient {
  static findClientRegexPositionsForUserAgent() {
    return null;
  }
}

module.exports = IndexerClient;
