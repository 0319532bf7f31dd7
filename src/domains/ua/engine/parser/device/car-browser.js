const DeviceAbstractParser = require('./../device-abstract-parser');

class CarBrowser extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/car_browsers');
  }
}

module.exports = CarBrowser;
