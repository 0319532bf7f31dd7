/**
 * Operator list files re-read on SIGHUP (the ip and email domains): one listener per opened domain, the
 * outcome logged as one JSON line. Returns what removes the listener, for the domain's `close`.
 */
export function reloadOnHangup(lists: string, reload: () => { ok: boolean }, log: (fields: Record<string, unknown>) => void): () => void {
  const onHangup = () => {
    const result = reload()
    log({
      level: result.ok ? 'info' : 'error',
      msg: result.ok ? `SIGHUP: ${lists} reloaded` : `SIGHUP: ${lists} could not be reloaded`,
      ...result,
    })
  }
  process.on('SIGHUP', onHangup)
  return () => process.off('SIGHUP', onHangup)
}
