/**
 * QR codes (SPEC "QR codes"): seven presets, png/svg/base64, images stored locally (signed links served
 * outside /api/v1) or in S3 (presigned links). No dataset. `open` only builds objects: the store folder,
 * the signing key and the per-key ledger are made on first use, and the sweeper (expired local images,
 * expired ledger charges) is an unref'd timer.
 */
import { join } from 'node:path'
import type { Config } from '../../config.ts'
import { trustedProxies } from '../../http/edge/client-ip.ts'
import { defineDomain } from '../types.ts'
import { qrSettings } from './settings.ts'
import { downloadRoutes } from './download.ts'
import { createLocalStore } from './local-store.ts'
import { qrRoutes } from './routes.ts'
import { createS3Store } from './s3-store.ts'
import { openQrService, qrMetrics, type StoreShares } from './service.ts'
import { stateDirLedger, type StoreLedger } from './shares.ts'
import { redisLedger } from './shares-redis.ts'
import type { QrDomainState } from './state.ts'
import { createSigner } from './signing.ts'
import { qrSources } from './sources.ts'
import type { Logger } from '../../lib/logger.ts'
import { createRenderPool } from './render-pool.ts'

/** `local` -> `<stateDir>/qr`; `local:/path` -> `/path`. */
export const localDir = (config: Config) =>
  config.qr.store === 'local' ? join(config.stateDir, 'qr') : config.qr.store.slice('local:'.length)

/** One caller's share of the store: the setting, else a 16th of the global cap. */
export const qrShareOf = (config: Config) => config.qr.storeMaxBytesPerKey ?? Math.floor(config.qr.storeMaxBytes / 16)

/**
 * This server is one of several: its keys or quotas are in Redis, shared with other instances. Then the
 * default local store (this instance's state dir) holds images no other instance can serve.
 */
export const oneOfSeveral = (config: Config) => config.stores.quota.kind === 'redis' || config.stores.keys.kind === 'redis'

export const UNSHARED_STORE =
  "The QR store is local (ALMANAC_QR_STORE=local, this instance's state dir) while keys and quotas are shared in Redis: links made " +
  'here are served only by this instance; set ALMANAC_QR_STORE=s3://… to share them.'

/** With a Redis quota store, the shares live there too, so a key's share holds across instances; else the state dir's SQLite. */
const ledgerOf = (config: Config, logger: Logger): StoreLedger =>
  config.stores.quota.kind === 'redis' ? redisLedger(config.stores.quota.url, logger) : stateDirLedger(config.stateDir)

export function openQrState(config: Config, logger: Logger, now: () => number = Date.now): QrDomainState {
  const log = (fields: Record<string, unknown>) => logger({ domain: 'qr', ...fields })
  const pool = createRenderPool(undefined, undefined, logger)
  const trusted = trustedProxies(config.trustedProxies, config.trustedProxyHeader)
  const signer = createSigner(config.qr.signingKey, config.stateDir)
  const q = config.qr
  const shares: StoreShares = { ledger: ledgerOf(config, logger), perCaller: qrShareOf(config) }
  // `local:/path` may be one directory every instance mounts (with one signing key): only the state dir is surely this instance's.
  const unshared = oneOfSeveral(config) && q.store === 'local'
  if (unshared) log({ level: 'warn', msg: UNSHARED_STORE })
  const readinessWarnings = () => (unshared ? [{ component: 'qr_store', problem: UNSHARED_STORE }] : [])
  // Expired charges are released by the clock at once; this only drops their rows now and then.
  const pruneLedger = () =>
    shares.ledger
      .prune(Math.floor(now() / 1000))
      .catch((e) => log({ level: 'error', msg: 'pruning the QR ledger failed', error: String(e) }))
  if (q.store.startsWith('s3://')) {
    const store = createS3Store({
      url: q.store,
      endpoint: q.s3Endpoint,
      publicEndpoint: q.s3PublicEndpoint,
      region: q.s3Region,
      accessKeyId: q.s3AccessKeyId,
      secretAccessKey: q.s3SecretAccessKey,
      virtualHostedStyle: q.s3VirtualHostedStyle,
      timeoutSeconds: q.s3TimeoutSeconds,
    })
    const sweeper = setInterval(pruneLedger, q.sweepSeconds * 1000)
    sweeper.unref()
    return { service: openQrService(store, shares, now, pool), trusted, signer, now, sweeper, readinessWarnings, several: false }
  }
  const local = createLocalStore({ dir: localDir(config), maxBytes: q.storeMaxBytes, signer, now })
  const sweeper = setInterval(() => {
    pruneLedger()
    local.sweep().then(
      (swept) => swept.deleted && log({ level: 'info', msg: 'swept expired QR images', ...swept }),
      (e) => log({ level: 'error', msg: 'sweeping QR images failed', error: String(e) }),
    )
  }, q.sweepSeconds * 1000)
  sweeper.unref()
  const several = oneOfSeveral(config)
  return { service: openQrService(local, shares, now, pool), trusted, local, signer, now, sweeper, readinessWarnings, several }
}

/** The domain with an injected clock (tests); the default export uses the wall clock. */
export const qrDomain = (now: () => number = Date.now) =>
  defineDomain<QrDomainState>({
    name: 'qr',
    tag: {
      name: 'qr',
      description:
        'QR code images for seven payloads (text, URL, Wi-Fi, vCard, email, SMS, geo): png or svg behind a signed link, or a base64 PNG ' +
        'inline.',
    },
    settings: qrSettings,
    prefixes: ['/qr'],
    datasets: [],
    open: ({ config, log }) => openQrState(config, log, now),
    routes: qrRoutes,
    publicRoutes: ({ service: state, config }) =>
      downloadRoutes({
        dir: state.local?.dir ?? '',
        signer: state.signer,
        now: state.now,
        enabled: !!state.local,
        several: state.several,
        ownKey: !config.qr.signingKey,
      }),
    close(state) {
      clearInterval(state.sweeper)
      state.service.close()
    },
    metrics: (state) => qrMetrics(state.service.stats()),
    sources: qrSources,
    docs: 'docs/qr.md',
    probes: 'test/domains/qr/probes.ts',
  })

export default qrDomain()
