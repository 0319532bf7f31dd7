/**
 * Domains the disposable lists must never flag, whatever an upstream list says: the big free mailbox
 * providers (real, long-lived mailboxes) and forwarding services that hide a real mailbox behind an
 * alias (Apple Hide My Email, Firefox Relay, DuckDuckGo, SimpleLogin, addy.io, Proton Pass). Upstream
 * lists have carried some of these by mistake; the builder takes them out and logs which. A subdomain of
 * an entry is covered too. Operators add their own with ALMANAC_EMAIL_ALLOW_LISTS.
 */
export const BUILTIN_ALLOW: readonly string[] = [
  // Free mailbox providers
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'msn.com',
  'yahoo.com',
  'ymail.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'gmx.com',
  'gmx.de',
  'gmx.net',
  'web.de',
  'mail.com',
  'yandex.ru',
  'yandex.com',
  'mail.ru',
  'zoho.com',
  'fastmail.com',
  'tutanota.com',
  'tuta.io',
  'qq.com',
  '163.com',
  'naver.com',
  // Forwarding services: an alias in front of a real mailbox
  'privaterelay.appleid.com',
  'mozmail.com',
  'duck.com',
  'simplelogin.com',
  'simplelogin.co',
  'slmail.me',
  'aleeas.com',
  'anonaddy.com',
  'anonaddy.me',
  'addy.io',
  'passmail.net',
  'passinbox.com',
]
