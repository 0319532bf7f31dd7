/**
 * The email domain: risk scoring of addresses from their syntax, the DNS (MX), RDAP (domain age) and
 * lists (disposable, free provider, abuse; operator allow/deny files reloaded on SIGHUP).
 * `emailDomain({ now })` lets tests inject the clock that domain ages are computed against.
 */
import { reloadOnHangup } from '../hangup.ts'
import { defineDomain } from '../types.ts'
import { emailSettings } from './settings.ts'
import { emailBuilders } from './build.ts'
import { emailRoutes, type EmailDomainState } from './routes.ts'
import { openEmailService, type EmailServiceOptions } from './service.ts'
import { emailSources } from './sources.ts'

export const emailDomain = (options: Pick<EmailServiceOptions, 'now'> = {}) =>
  defineDomain<EmailDomainState>({
    name: 'email',
    tag: {
      name: 'email',
      description:
        'Risk of an email address, scored 0 to 100 from its syntax, MX records, domain age (RDAP) and disposable, free-provider and ' +
        'abuse lists; checks that could not be made are named, never guessed.',
    },
    settings: emailSettings,
    prefixes: ['/email'],
    datasets: ['email-lists', 'email-rdap'],
    open({ config, data, log: logger }) {
      const log = (fields: Record<string, unknown>) => logger({ domain: 'email', ...fields })
      const service = openEmailService(config, data, { ...options, log: (msg) => log({ level: 'warn', msg }), logFields: log })
      const stopReloading = reloadOnHangup('operator email lists', () => service.reload(), log)
      const readinessWarnings = () => {
        const problem = service.resolver.problem
        return problem ? [{ component: 'dns_resolver', problem }] : []
      }
      return { service, stopReloading, readinessWarnings }
    },
    routes: emailRoutes,
    close(state) {
      state.stopReloading()
      state.service.close()
    },
    builders: emailBuilders,
    sources: emailSources,
    docs: 'docs/email.md',
    probes: 'test/domains/email/probes.ts',
  })

export default emailDomain()
