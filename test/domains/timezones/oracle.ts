/**
 * The independent oracle: CPython's `zoneinfo` reading the same system tzdata (PYTHONTZPATH pinned to
 * /usr/share/zoneinfo so the pip `tzdata` package can never stand in). One python process per batch,
 * JSON in and out through files (large pipes are slow to drain here).
 */
import { spawnSync } from 'bun'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PYTHON } from '../../support/python.ts'

const SCRIPT = `
import json, sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo
req = json.load(open(sys.argv[1]))
out = {}
if req["kind"] == "instants":
    # name -> [[offset seconds, 1 if DST, abbreviation] per instant]
    for name, instants in req["zones"].items():
        z = ZoneInfo(name)
        rows = []
        for t in instants:
            d = datetime.fromtimestamp(t, z)
            rows.append([int(d.utcoffset().total_seconds()), 1 if d.dst() else 0, d.tzname()])
        out[name] = rows
elif req["kind"] == "convert":
    # [{from, to, date, time}] -> the conversion's dates and 24-hour times, and the wall time's status
    rows = []
    for c in req["cases"]:
        src, dst = ZoneInfo(c["from"]), ZoneInfo(c["to"])
        naive = datetime.fromisoformat(c["date"] + "T" + c["time"])
        first = naive.replace(tzinfo=src, fold=0)
        t = first.timestamp()
        a = datetime.fromtimestamp(t, src)
        b = datetime.fromtimestamp(t, dst)
        if a.replace(tzinfo=None) != naive:
            status = "gap"
        elif first.utcoffset() != naive.replace(tzinfo=src, fold=1).utcoffset():
            status = "ambiguous"
        else:
            status = "ok"
        rows.append({"from_date": a.strftime("%Y-%m-%d"), "from_time_24h": a.strftime("%H:%M:%S"),
                     "to_date": b.strftime("%Y-%m-%d"), "to_time_24h": b.strftime("%H:%M:%S"), "from_time_status": status})
    out = rows
elif req["kind"] == "periods":
    # name -> per instant: the next visible change and the DST period around it, found by scanning in
    # steps of a week (no period is shorter) and bisecting to the second. Nothing within HORIZON: null.
    STEP, HORIZON = 7 * 86400, 5 * 366 * 86400
    def state(z, t):
        d = datetime.fromtimestamp(t, z)
        return (int(d.utcoffset().total_seconds()), bool(d.dst()), d.tzname())
    def first_change(z, t, differs, direction):
        # the first instant after t (or the last at or before t going back) where differs(state) holds
        here = state(z, t)
        lo = t
        for k in range(1, HORIZON // STEP + 2):
            hi = t + direction * k * STEP
            if differs(state(z, hi), here):
                a, b = (lo, hi) if direction > 0 else (hi, lo)
                # invariant going forward: not differs at a, differs at b; back: differs at a, not at b
                while b - a > 1:
                    m = (a + b) // 2
                    if differs(state(z, m), here) == (direction > 0):
                        b = m
                    else:
                        a = m
                return b if direction > 0 else b
            lo = hi
        return None
    for name, instants in req["zones"].items():
        z = ZoneInfo(name)
        rows = []
        for t in instants:
            nxt = first_change(z, t, lambda s, h: s != h, 1)
            nxt_row = [nxt, *state(z, nxt)] if nxt is not None else None
            if state(z, t)[1]:
                frm = first_change(z, t, lambda s, h: not s[1], -1)
                until = first_change(z, t, lambda s, h: not s[1], 1)
            else:
                frm = until = None
            rows.append([nxt_row, frm, until])
        out[name] = rows
else:
    # name -> [[instant, status] per wall time]; PEP 495 fold=0 is the rule the service documents:
    # a skipped time is read with the offset before the change, a repeated one is its first occurrence.
    epoch = datetime(1970, 1, 1)
    for name, walls in req["zones"].items():
        z = ZoneInfo(name)
        rows = []
        for w in walls:
            naive = epoch + timedelta(seconds=w)
            first = naive.replace(tzinfo=z, fold=0)
            second = naive.replace(tzinfo=z, fold=1)
            t = int(first.timestamp())
            back = datetime.fromtimestamp(t, z).replace(tzinfo=None)
            if back != naive:
                status = "gap"
            elif first.utcoffset() != second.utcoffset():
                status = "ambiguous"
            else:
                status = "ok"
            rows.append([t, status])
        out[name] = rows
json.dump(out, open(sys.argv[2], "w"))
`

function run<T>(request: unknown): T {
  const dir = mkdtempSync(join(tmpdir(), 'tz-oracle-'))
  try {
    const input = join(dir, 'in.json')
    const output = join(dir, 'out.json')
    writeFileSync(input, JSON.stringify(request))
    const result = spawnSync({
      cmd: [PYTHON, '-c', SCRIPT, input, output],
      env: { ...process.env, PYTHONTZPATH: '/usr/share/zoneinfo' },
      stdout: 'ignore',
    })
    if (result.exitCode !== 0) throw new Error(`python zoneinfo oracle failed: ${result.stderr.toString()}`)
    return JSON.parse(readFileSync(output, 'utf8'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Offset, DST flag and abbreviation of each zone at each of its instants. */
export const oracleAt = (zones: Record<string, number[]>) => run<Record<string, [number, 0 | 1, string][]>>({ kind: 'instants', zones })

/** The instant (fold=0) and gap/ambiguous status of each wall time (local seconds since 1970-01-01). */
export const oracleWall = (zones: Record<string, number[]>) =>
  run<Record<string, [number, 'ok' | 'gap' | 'ambiguous'][]>>({ kind: 'wall', zones })

export interface ConvertCase {
  from: string
  to: string
  date: string
  time: string
}

/** What zoneinfo says a conversion gives (fold=0 for the wall time, as the service documents). */
export const oracleConvert = (cases: ConvertCase[]) =>
  run<{ from_date: string; from_time_24h: string; to_date: string; to_time_24h: string; from_time_status: string }[]>({
    kind: 'convert',
    cases,
  })

/** Per instant: the next visible change [at, offset, dst, abbreviation] and the DST period's [from, until] (nulls outside DST). */
export const oraclePeriods = (zones: Record<string, number[]>) =>
  run<Record<string, [[number, number, boolean, string] | null, number | null, number | null][]>>({ kind: 'periods', zones })
