module.exports = {
  MOBILE: 'Mobile',
  HBBTV: 'HbbTv',
  SHELLTV: 'ShellTv',
  NOTEBOOK: 'Notebook',
  CONSOLE: 'Console',
  CAR_BROWSER: 'CarBrowser',
  CAMERA: 'Camera',
  PORTABLE_MEDIA_PLAYER: 'PortableMediaPlayer',
}