module.exports = {
  MOBILE_APP: 'mobile app',
  BROWSER: 'browser',
  LIBRARY: 'library',
  MEDIA_PLAYER: 'mediaplayer',
  FEED_READER: 'feed reader',
  PIM: 'pim',
};
