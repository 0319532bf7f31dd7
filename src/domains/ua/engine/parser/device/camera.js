const DeviceAbstractParser = require('./../device-abstract-parser');

class Camera extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/cameras');
  }
}

module.exports = Camera;
