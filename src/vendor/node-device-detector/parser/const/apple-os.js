module.exports = [
  'tvOS',
  'iOS',
  'Mac',
  'iPadOS',
  'watchOS'
];
