/**
 * A domain still opening: on a first start the executable extracts its datasets and each domain serves as
 * soon as its own are in place; until then its routes answer 503 with Retry-After and /readyz lists it.
 */
import type { Domain } from '../domains/types.ts'

/** Seconds a caller is told to wait (Retry-After) while a domain is still opening. */
export const OPENING_RETRY_SECONDS = 2

/** What a domain still opening answers on its routes (503), in /readyz and in /meta/datasets. */
export const openingProblem = (domain: Pick<Domain, 'name'>) =>
  `The ${domain.name} domain is still opening its datasets (the first start extracts them); retry in a few seconds.`
