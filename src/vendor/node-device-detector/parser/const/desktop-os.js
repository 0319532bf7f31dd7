module.exports = [
  'AmigaOS',
  'IBM',
  'GNU/Linux',
  'Mac',
  'Unix',
  'Windows',
  'BeOS',
  'Chrome OS',
];
