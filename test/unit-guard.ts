/**
 * Preloaded by `bun run test:unit` (test/unit.ts): a unit test that opens a server or reaches the network
 * fails here with a line that says why, instead of passing slowly.
 */
const refuse = (what: string) => () => {
  throw new Error(`test:unit: ${what} is not allowed in the unit lane (take the test out of UNIT_TESTS in test/unit.ts)`)
}

;(Bun as { serve: unknown }).serve = refuse('Bun.serve')
globalThis.fetch = Object.assign(refuse('fetch'), { preconnect: () => {} }) as unknown as typeof fetch
