// Almanac: the stock hash indexes are not shipped; the prefilter handed in through ../../matchers.js replaces them.
class IndexerDevice {
  static findDeviceBrandsForDeviceCode() {
    return [];
  }
}

module.exports = IndexerDevice;
