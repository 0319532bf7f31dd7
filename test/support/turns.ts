/**
 * Counts turns of the event loop, for tests that check what ran in which turn without a clock: one
 * setImmediate, re-armed each turn. `now()` is the number of turns passed; `stop()` lets the process end.
 */
export function turnCounter() {
  let turns = 0
  let on = true
  const step = () => {
    turns++
    if (on) setImmediate(step)
  }
  setImmediate(step)
  return { now: () => turns, stop: () => void (on = false) }
}
