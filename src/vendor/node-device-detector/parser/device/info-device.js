// Almanac: the device-info database (year, weight, display) is not shipped; `deviceInfo` answers nothing.
class InfoDevice {
  info() {
    return null;
  }
}

module.exports = InfoDevice;
