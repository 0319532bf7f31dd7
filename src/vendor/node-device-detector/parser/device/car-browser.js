const DeviceAbstractParser = require('./../device-abstract-parser');

class CarBrowser extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/car_browsers');
    this.preMatch = true; // Almanac: Matomo pre-matches this list on the UA as sent (preMatchOverall)
  }
}

module.exports = CarBrowser;
