/**
 * Requests that arrive in one turn of the event loop start together, after the loop has read them all: the
 * server's `fetch` only queues a request, and one `setImmediate` a turn starts the queue in arrival order.
 *
 * Why: a request here is a chain of stages (the request hook, the body read, the handler, the reply), each
 * an `await`. Started as each is read, the requests of a turn ran one after the other, each through all its
 * stages (Bun drains the microtasks after every `fetch` call), so every stage's code and data were evicted by
 * the other stages before the next request needed them again. Started together, each stage runs for every
 * request of the turn before the next stage does, and stays in the caches. Under concurrent load that was
 * 20-40% less CPU a request over HTTP (docs/performance.md, eleventh session: a light GET 47 -> 28 µs, a unique
 * user agent 135-146 -> 90-106 µs); with one connection, nothing to start together, 0-15 µs more in two runs.
 *
 * Who starts first within a turn is still `turns.ts`'s: it counts each caller's starts, and predicts how long
 * the turn will run from what its starts cost in the last turns, as the work of requests started together
 * comes after all of them have started.
 */
import { DEFAULT_BODY_LIMIT } from '../routing/route-table.ts'

type Handle = (request: Request) => Response | Promise<Response>

/**
 * A request declaring a body over what an ordinary route takes (admission.ts), or one of unknown length
 * (chunked), starts as soon as it is read. Refused from its headers (401, 413, 415, 429), it is answered before
 * its body is in; queued, its answer came a moment later, and Bun buffered the body meanwhile (bench/fairness.ts,
 * four keys sending 1 MB text bodies to JSON routes: 1,206 MiB of RSS, against 219 when each request started as read).
 */
export const QUEUED_BODY_MAX = DEFAULT_BODY_LIMIT

/** Whether a request may wait for the end of the turn: no body, or a small one it has likely brought whole. */
function mayWait(request: Request): boolean {
  const length = request.headers.get('content-length')
  if (length === null) return !request.headers.has('transfer-encoding')
  return Number(length) <= QUEUED_BODY_MAX
}

export function startTogether(handle: Handle): (request: Request) => Response | Promise<Response> {
  let arrived: Request[] = []
  let answers: PromiseWithResolvers<Response>[] = []

  const startAll = () => {
    const requests = arrived
    const waiting = answers
    arrived = []
    answers = []
    for (let i = 0; i < requests.length; i++) {
      try {
        waiting[i]!.resolve(handle(requests[i]!))
      } catch (e) {
        // A fault in one request's first stage is that request's alone: the others of the turn still start.
        waiting[i]!.reject(e)
      }
    }
  }

  return (request) => {
    if (!mayWait(request)) return handle(request)
    if (arrived.length === 0) setImmediate(startAll)
    const answer = Promise.withResolvers<Response>()
    arrived.push(request)
    answers.push(answer)
    return answer.promise
  }
}
