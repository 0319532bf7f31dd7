// eslint-disable-next-line no-undef
module.exports = [
  'Kylo',
  'Espial TV Browser',
  'LUJO TV Browser',
  'LogicUI TV Browser',
  'Open TV Browser',
  'Seraphic Sraf',
  'Opera Devices',
  'Crow Browser',
  'Vewd Browser',
  'TiviMate',
  'Quick Search TV',
  'QJY TV Browser',
  'TV Bro',
  'Redline',
  'Odin',
];
