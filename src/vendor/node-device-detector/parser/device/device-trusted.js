// Almanac: `deviceTrusted` is not offered; it would need the device-info database.
class DeviceTrusted {
  static check() {
    return null;
  }
}

module.exports = DeviceTrusted;
