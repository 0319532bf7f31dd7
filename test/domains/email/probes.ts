/** Probes of the email domain for the executable test (test/build/probes.ts). Answers in Form B. */
import { expect } from 'bun:test'
import type { Probe } from '../../build/probes.ts'

export const probes: Probe[] = [
  // Two @ signs are not a mailbox (RFC 5321): score 100 without any lookup.
  {
    method: 'POST',
    path: '/api/v1/email/risk',
    body: { email: 'two@@example.com' },
    check: (b) => expect(b).toMatchObject({ valid_syntax: false, risk_score: 1, risk_level: 'critical' }),
  },
  // Mailinator is the best-known disposable mail service: the embedded lists must say so. DNS and RDAP
  // may be unreachable from the sandbox; they answer "unknown" within their timeouts (2 s and 3 s).
  {
    method: 'POST',
    path: '/api/v1/email/risk/bulk',
    body: { emails: ['someone@mailinator.com'] },
    check: (b) => expect(b.results[0]).toMatchObject({ valid_syntax: true, disposable: true, free_provider: false }),
  },
]
