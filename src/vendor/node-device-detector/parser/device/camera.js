const DeviceAbstractParser = require('./../device-abstract-parser');

class Camera extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/cameras');
    this.preMatch = true; // Almanac: Matomo pre-matches this list on the UA as sent (preMatchOverall)
  }
}

module.exports = Camera;
