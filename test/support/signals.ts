/**
 * Resolves when the next SIGHUP has been handled: listeners run in the order they were added, so one
 * added after the domain's runs after its reload (the signal itself arrives on a later turn of the loop).
 */
export function signalled(): Promise<void> {
  return new Promise((resolve) => process.once('SIGHUP', () => resolve()))
}
