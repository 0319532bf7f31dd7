/** Every domain the server mounts, in the order their routes are registered. */
import type { Domain } from './types.ts'
import bible from './bible/index.ts'
import countries from './countries/index.ts'
import email from './email/index.ts'
import hash from './hash/index.ts'
import ip from './ip/index.ts'
import postal from './postal/index.ts'
import qr from './qr/index.ts'
import timezones from './timezones/index.ts'
import ua from './ua/index.ts'

export const domains: Domain[] = [ua, hash, timezones, countries, postal, ip, bible, email, qr]
