/** What a call came to, as comparable data: its value, or the AlmanacError it threw (any other error is rethrown). */
import { AlmanacError } from '../../src/lib/errors.ts'

export async function settled(run: () => unknown) {
  try {
    return { value: await run() }
  } catch (e) {
    if (!(e instanceof AlmanacError)) throw e
    return { problem: { kind: e.kind, detail: e.detail, options: e.options } }
  }
}
