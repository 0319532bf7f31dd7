const DeviceAbstractParser = require('./../device-abstract-parser');

class Console extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/consoles');
  }
}

module.exports = Console;
