/**
 * Downloading one upstream file so an operator can watch it: a short deadline for the server to answer
 * (and for each silence while the body arrives), apart from the deadline of the whole file; bytes and
 * rate while it arrives (a bar on a terminal, a line every few seconds otherwise); a few tries with
 * back-off when the failure may pass (no answer, a dropped connection, HTTP 5xx or 429); and a final
 * error that names the source and says how to supply the file by hand.
 *
 * The body is streamed to `<path>.<pid>.part` while it is hashed, then checked against the pin and
 * renamed: an interrupted or refused download leaves nothing behind.
 */
import { createHash } from 'node:crypto'
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { progress } from '../lib/progress.ts'
import type { Source } from './types.ts'
import { mirrorPathOfUrl, upstreamUrl, urlPin } from './upstream.ts'

export interface DownloadOptions {
  /** Where downloads go instead of the upstream hosts (see upstream.ts); default ALMANAC_UPSTREAM_BASE. */
  base?: string
  /** The whole file (default ALMANAC_DOWNLOAD_TIMEOUT_MS, else 15 minutes). */
  timeoutMs?: number
  /** Until the server answers, and any silence while the body arrives (default ALMANAC_DOWNLOAD_CONNECT_TIMEOUT_MS, else 10 s). */
  connectTimeoutMs?: number
  /** Tries in all (default ALMANAC_DOWNLOAD_TRIES, else 3). */
  tries?: number
  /** Wait before the second try, doubled before each further one (default 1 s). */
  backoffMs?: number
  /** Progress as a redrawn bar (default: stderr is a terminal). */
  tty?: boolean
  /** Plain progress lines at most this often (default 5 s). */
  progressEveryMs?: number
}

/** The pin did not match: trying again would not help, and the file must not be used. */
export class PinMismatchError extends Error {
  override name = 'PinMismatchError'
}

/** A failure worth another try: the server never answered, went silent, dropped the connection, or said 5xx/429. */
class TransientError extends Error {}

const envNumber = (name: string): number | undefined => {
  const v = Number(process.env[name])
  return process.env[name] && Number.isFinite(v) && v > 0 ? v : undefined
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`

/** How an operator supplies a source's URL file by hand when this machine cannot download it. */
export function byHand(source: Source): string {
  return (
    `download ${source.url} yourself and put it at $ALMANAC_MIRROR/${mirrorPathOfUrl(source)} ` +
    '(or run `almanac data fetch --to DIR` on a machine with internet and set ALMANAC_MIRROR=DIR)'
  )
}

/** Downloads a source's URL into `path` (pin checked); returns the sha256. */
export async function download(source: Source, path: string, log: (line: string) => void, options: DownloadOptions = {}): Promise<string> {
  const url = 'base' in options ? upstreamUrl(source.url!, options.base) : upstreamUrl(source.url!)
  const tries = options.tries ?? envNumber('ALMANAC_DOWNLOAD_TRIES') ?? 3
  const backoffMs = options.backoffMs ?? 1000
  const errors: string[] = []
  for (let attempt = 1; ; attempt++) {
    try {
      return await downloadOnce(source, url, path, log, options, attempt > 1 ? ` (try ${attempt} of ${tries})` : '')
    } catch (e) {
      if (!(e instanceof TransientError) || attempt >= tries) {
        if (e instanceof PinMismatchError) throw e
        errors.push((e as Error).message)
        const what = errors.length > 1 ? `${errors.length} tries failed: ${errors.join('; ')}` : errors[0]
        throw new Error(`${what}. To supply ${source.id} by hand: ${byHand(source)}`)
      }
      errors.push((e as Error).message)
      const wait = backoffMs * 2 ** (attempt - 1)
      log(`${source.id}: ${(e as Error).message}; trying again in ${seconds(wait)} (${attempt + 1} of ${tries})`)
      await Bun.sleep(wait)
    }
  }
}

async function downloadOnce(
  source: Source,
  url: string,
  path: string,
  log: (line: string) => void,
  options: DownloadOptions,
  attemptText: string,
): Promise<string> {
  const timeoutMs = options.timeoutMs ?? envNumber('ALMANAC_DOWNLOAD_TIMEOUT_MS') ?? 15 * 60_000
  const connectTimeoutMs = options.connectTimeoutMs ?? envNumber('ALMANAC_DOWNLOAD_CONNECT_TIMEOUT_MS') ?? 10_000
  const controller = new AbortController()
  let why = ''
  const abort = (reason: string) => {
    why = reason
    controller.abort()
  }
  const whole = setTimeout(() => abort(`the whole file took longer than ${seconds(timeoutMs)}`), timeoutMs)
  let silence = setTimeout(() => abort(`no answer within ${seconds(connectTimeoutMs)}`), connectTimeoutMs)
  const heard = () => {
    clearTimeout(silence)
    silence = setTimeout(() => abort(`no data for ${seconds(connectTimeoutMs)}`), connectTimeoutMs)
  }
  const tmp = `${path}.${process.pid}.part`
  let fd: number | undefined
  try {
    log(`${source.id}: downloading ${url}${attemptText}`)
    let res: Response
    try {
      res = await fetch(url, { signal: controller.signal })
    } catch (e) {
      const message = why || `${url}: ${(e as Error).message}`
      // A name that does not resolve (no DNS on this machine, a mistyped base) will not resolve in a second.
      if (!why && /ENOTFOUND/.test(`${(e as NodeJS.ErrnoException).code} ${(e as Error).message}`)) throw new Error(message)
      throw new TransientError(message)
    }
    if (!res.ok) {
      const message = `${url} answered HTTP ${res.status}`
      if (res.status >= 500 || res.status === 429) throw new TransientError(message)
      throw new Error(message)
    }
    heard()
    const length = Number(res.headers.get('content-length')) || undefined
    const bar = progress(`${source.id}`, length, log, options.tty ?? !!process.stderr.isTTY, {
      unit: 'bytes',
      ...(options.progressEveryMs === undefined ? {} : { everyMs: options.progressEveryMs }),
    })
    const hash = createHash('sha256')
    mkdirSync(dirname(path), { recursive: true })
    fd = openSync(tmp, 'w')
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        heard()
        hash.update(chunk)
        writeSync(fd, chunk)
        bar.tick(chunk.length)
      }
    } catch (e) {
      throw new TransientError(why ? `${url}: ${why}` : `${url}: the connection broke (${(e as Error).message})`)
    }
    bar.done()
    closeSync(fd)
    fd = undefined
    const sha = hash.digest('hex')
    const pin = urlPin(source)
    if (pin && sha !== pin.toLowerCase()) {
      throw new PinMismatchError(
        `Source ${source.id}: ${url} served a file with sha256 ${sha}, but its domain's sources.ts pins ${pin}; the upstream changed. ` +
          `Update the source's version, date and sha256 after checking the new release.`,
      )
    }
    if (!pin) log(`${source.id}: warning: no sha256 pinned in its domain's sources.ts for ${source.url}; the download has sha256 ${sha}`)
    renameSync(tmp, path)
    return sha
  } finally {
    clearTimeout(whole)
    clearTimeout(silence)
    if (fd !== undefined) closeSync(fd)
    rmSync(tmp, { force: true })
  }
}
