/**
 * A hashing worker thread (lib/worker-thread.ts): the slow KDFs run here so the server's event loop keeps
 * answering while they work. `build/compile.ts` adds every `*worker.ts` as an entry point so this file
 * also exists inside the compiled executable.
 */
import { serveJobs } from '../../lib/worker-thread.ts'
import { runKdf, type KdfJob } from './kdf.ts'

serveJobs<KdfJob>(runKdf)
