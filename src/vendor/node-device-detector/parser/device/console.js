const DeviceAbstractParser = require('./../device-abstract-parser');

class Console extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/consoles');
    this.preMatch = true; // Almanac: Matomo pre-matches this list on the UA as sent (preMatchOverall)
  }
}

module.exports = Console;
