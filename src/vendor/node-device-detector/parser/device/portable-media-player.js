const DeviceAbstractParser = require('./../device-abstract-parser');

class PortableMediaPlayer extends DeviceAbstractParser {
  constructor() {
    super();
    this.collection = require('../../data').collection('device/portable_media_player');
    this.preMatch = true; // Almanac: Matomo pre-matches this list on the UA as sent (preMatchOverall)
  }
}

module.exports = PortableMediaPlayer;
