// Almanac: the stock hash indexes are not shipped; the prefilter in ../../data.js replaces them.
class IndexerDevice {
  static findDeviceBrandsForDeviceCode() {
    return [];
  }
}

module.exports = IndexerDevice;
