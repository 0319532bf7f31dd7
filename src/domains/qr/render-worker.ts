/**
 * The render worker: makes large QR images (`image.ts`) off the event loop. One job at a time; a problem
 * the image raises (payload over capacity, size under the modules: 422s) goes back as its parts, since an
 * Error's own members do not survive postMessage.
 */
import { AlmanacError } from '../../lib/errors.ts'
import { yieldToEventLoop } from '../../lib/threads.ts'
import { type ImageOptions, makeImage } from './image.ts'

// Large images wait a little longer when every core is busy, so cheap requests on the loop stay fast.
yieldToEventLoop()

export interface RenderJob {
  id: number
  payload: string
  field: string
  options: ImageOptions
}

export type RenderReply =
  | { id: number; image: ReturnType<typeof makeImage> }
  | { id: number; problem: { kind: AlmanacError['kind']; detail: string; options: AlmanacError['options'] } }
  | { id: number; error: string }

declare const self: Worker

self.onmessage = (event: MessageEvent<RenderJob>) => {
  const { id, payload, field, options } = event.data
  let reply: RenderReply
  try {
    reply = { id, image: makeImage(payload, field, options) }
  } catch (e) {
    reply =
      e instanceof AlmanacError
        ? { id, problem: { kind: e.kind, detail: e.detail, options: e.options } }
        : { id, error: String((e as Error)?.stack ?? e) }
  }
  const transfer = 'image' in reply ? [reply.image.bytes.buffer as ArrayBuffer] : []
  self.postMessage(reply, transfer)
}
