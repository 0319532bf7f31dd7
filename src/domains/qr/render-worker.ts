/**
 * The render worker (lib/worker-thread.ts): makes large QR images (`image.ts`) off the event loop. A
 * problem the image raises (payload over capacity, size under the modules: 422s) goes back as a problem;
 * the image's bytes are handed over, not copied.
 */
import { serveJobs } from '../../lib/worker-thread.ts'
import { type ImageOptions, makeImage } from './image.ts'

export interface RenderJob {
  payload: string
  field: string
  options: ImageOptions
}

serveJobs<RenderJob>(
  ({ payload, field, options }) => makeImage(payload, field, options),
  (image: ReturnType<typeof makeImage>) => [image.bytes.buffer as ArrayBuffer],
)
