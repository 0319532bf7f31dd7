/**
 * What the QR domain holds once open (openQrState in index.ts) and its routes read: apart from the descriptor,
 * so routes.ts need not import index.ts, which imports routes.ts.
 */
import type { TrustedProxies } from '../../http/edge/client-ip.ts'
import type { LocalStore } from './local-store.ts'
import type { QrService } from './service.ts'
import type { Signer } from './signing.ts'

export interface QrDomainState {
  service: QrService
  trusted: TrustedProxies
  /** The local store, when that is the store (its download route and sweeper). */
  local?: LocalStore
  signer: Signer
  now: () => number
  sweeper?: ReturnType<typeof setInterval>
  /** Keys or quotas are shared in Redis with other instances (index.ts `oneOfSeveral`), and images are local. */
  several: boolean
  /** /readyz warnings that leave the domain ready: an unshared store on a server that is one of several. */
  readinessWarnings(): { component: string; problem: string }[]
}
