/**
 * Radius and polygon queries over the R*Tree, exact in their counts and order, with cost that follows
 * the edge of the shape and the page rather than the number of points inside.
 *
 * - A country is a dimension of the R*Tree (its key, its first place id: build.ts), so the tree searches
 *   the country with the box and never returns another country's points (a box over a small country
 *   beside dense ones read theirs: Gibraltar within 500 km, ~127,000 rows and ~50 ms for one, not counted
 *   as work since they were dropped after the tree; now one row).
 * - Candidates are read as their R*Tree boxes (32-bit floats, rounded outward): a point whose box is
 *   clearly inside or outside the shape is decided from the box; only a point within a box's width of
 *   the edge (a few in a million) has its exact coordinates read.
 * - Radius count: the grid cells wholly inside the circle from stored running counts (two seeks a grid
 *   row, whatever the cells in it), plus the measured points of the cells on its edge (grid.ts).
 * - Radius page: the nearest `offset + limit` are searched in a circle grown from the size the density
 *   predicts, so a page of 50 measures ~100 points.
 * - Work: every row these queries read calls `work_unit(1, <its id>)`, and a polygon's edge tests are spent from
 *   the same meter, so a caller's budget (service.ts) stops an oversized shape inside the scan.
 */
import type { Database, Statement } from 'bun:sqlite'
import { WorkMeter } from '../../lib/work-budget.ts'
import { circleBoxes, haversineKm, inPolygon, type Box, type Polygon } from './geo.ts'
import { circleCover, coverGrid, coverRows, Grid, type Run } from './grid.ts'

/** Which points of the R*Tree belong to a country. */
export interface CountryScope {
  alpha2: string
  /** The country's key in the R*Tree (its first place id), or null when it has no places. */
  key: number | null
}

/** Tuning of the radius count; tests set `sparseBelow: 0` to take the cell path on sparse data. */
export interface SpatialTuning {
  /** Below this many points in a circle's box, the radius count measures them all. */
  sparseBelow: number
  /** Rows of edge runs searched with one R*Tree box: fewer, larger searches against more points read. */
  edgeRows: number
}

/** Kilometres per degree of latitude (and the most a degree of longitude can be), rounded up. */
const KM_PER_DEG = 111.2

export interface NearHit {
  id: number
  km: number
}

type BoxRow = [id: number, minLat: number, maxLat: number, minLng: number, maxLng: number]
type ExactRow = [id: number, lat: number, lng: number]

const BOX = 'r.max_lat >= ? AND r.min_lat <= ? AND r.max_lng >= ? AND r.min_lng <= ?'

/** Edge tests of a polygon that cost about one unit of work (one row read): ~2.5 ns against ~0.25 µs. */
export const EDGES_PER_UNIT = 64
/**
 * One R*Tree search beyond the rows it returns (descending the tree, node boxes that overlap): measured
 * 4–9 µs for a tiny box, so a MultiPolygon of 2,000 specks or a circle's ~900 edge boxes pay for it.
 */
export const SEARCH_UNITS = 32
/**
 * Units of one grid row of a circle's cell cover (four searches of trigonometric bounds, each from the row
 * before's answer: 900 rows, 1.3–2.7 ms at 500 km, 4.4–6.3 ms when each was a binary search from the centre),
 * spent before the cover is made, so a wide circle's cover is not done on the event loop before its query
 * moves to a worker (docs/postal.md).
 */
export const COVER_UNITS_PER_ROW = 8
/** Units of a row's run of inside cells: two seeks of the running counts (~2.5 µs each measured). */
export const RUN_UNITS = 8

/** The running count at the last stored cell of the row at or before a key (0 when there is none). */
const runningCountAt = (key: string) =>
  'coalesce((SELECT c.cum FROM cells c WHERE c.country = ?2 AND c.per_deg = ?3 AND c.cell BETWEEN j.value ->> 0 AND ' +
  `${key} ORDER BY c.cell DESC LIMIT 1), 0)`
/** Points in runs given as JSON [row's first key, key before the run, run's last key] (?1), country ?2, grid ?3. */
const CELL_COUNT = `SELECT TOTAL(${runningCountAt('j.value ->> 2')} - ${runningCountAt('j.value ->> 1')}) AS n FROM json_each(?1) j`

export class Spatial {
  /** The stored grids, finest first. */
  private readonly grids: Grid[]
  private readonly statements = new Map<string, Statement>()

  private readonly tuning: SpatialTuning
  private readonly meter: WorkMeter

  constructor(
    private readonly db: Database,
    tuning: Partial<SpatialTuning> = {},
  ) {
    this.tuning = { sparseBelow: 3000, edgeRows: 2, ...tuning }
    // Revision 6 (running counts, several grids) records `cell_degs`; an older artifact must be rebuilt.
    const degs = db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'cell_degs'").get()
    if (!degs)
      throw new Error(
        'postal.sqlite has no grid running counts (built by an older builder): rebuild it with `almanac data build --only postal`',
      )
    this.grids = (JSON.parse(degs.value) as number[]).map((deg) => new Grid(deg))
    this.meter = WorkMeter.of(db)
  }

  /** A statement per SQL text and scope kind, prepared once. */
  private stmt(sql: string, scope: CountryScope): Statement {
    // `work_unit(…)` comes before the scope in every statement: were a planner to test the scope after the
    // tree, the rows it drops would still be counted.
    const text = sql.replace('$SCOPE', scope.key !== null ? 'r.max_key >= ? AND r.min_key <= ?' : 'r.country = ?')
    let s = this.statements.get(text)
    if (!s) this.statements.set(text, (s = this.db.query(text)))
    return s
  }

  private static scopeArgs(scope: CountryScope): (string | number)[] {
    return scope.key !== null ? [scope.key, scope.key] : [scope.alpha2]
  }

  private boxes(scope: CountryScope, box: Box): BoxRow[] {
    return this.stmt(
      `SELECT r.id, r.min_lat, r.max_lat, r.min_lng, r.max_lng FROM places_rtree r WHERE ${BOX} AND work_unit(1, r.id) AND $SCOPE`,
      scope,
    ).values(box.minLat, box.maxLat, box.minLng, box.maxLng, ...Spatial.scopeArgs(scope)) as BoxRow[]
  }

  /** Exact coordinates, as [id, latitude, longitude], of the points with these ids. */
  private exactOf(ids: number[]): ExactRow[] {
    if (!ids.length) return []
    let s = this.statements.get('exact')
    if (!s)
      this.statements.set(
        'exact',
        (s = this.db.query('SELECT id, latitude, longitude FROM places WHERE id IN (SELECT value FROM json_each(?)) AND work_unit(1, id)')),
      )
    return s.values(JSON.stringify(ids)) as ExactRow[]
  }

  /** Number of the country's points in the cells of the runs of `grid`, from its stored running counts. */
  private cellCount(scope: CountryScope, grid: Grid, runs: Run[]): number {
    this.meter.spend(runs.length * RUN_UNITS)
    const ranges = runs.map((r) => [grid.key(r.row, 0), grid.key(r.row, r.from) - 1, grid.key(r.row, r.to)])
    const sum = this.stmt(CELL_COUNT, scope).get(JSON.stringify(ranges), scope.alpha2, grid.perDeg) as { n: number }
    return sum.n
  }

  /** Number of points of the country within `radiusKm` (haversine) of the centre, exactly. */
  countWithin(scope: CountryScope, lat: number, lng: number, radiusKm: number): number {
    // Where the circle's box holds few points (most of the world at GeoNames density), measuring them
    // all costs less than the cell cover's fixed ~0.3 ms; counting up to `sparseBelow` points tells which.
    const boxes = circleBoxes(lat, lng, radiusKm * (1 + 1e-9))
    const sparse = this.tuning.sparseBelow
    let inBox = 0
    for (const box of boxes) {
      if (!sparse) break
      const sql = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM places_rtree r WHERE ${BOX} AND $SCOPE LIMIT ${sparse})`
      inBox += (this.stmt(sql, scope).get(box.minLat, box.maxLat, box.minLng, box.maxLng, ...Spatial.scopeArgs(scope)) as { n: number }).n
    }
    if (inBox < sparse) {
      let total = 0
      for (const box of boxes)
        for (const [id, minLat, maxLat, minLng, maxLng] of this.boxes(scope, box))
          if (this.inCircle(id, minLat, maxLat, minLng, maxLng, lat, lng, radiusKm)) total++
      return total
    }
    const grid = coverGrid(this.grids, lat, radiusKm)
    this.meter.spend(coverRows(grid, lat, radiusKm) * COVER_UNITS_PER_ROW)
    const cover = circleCover(grid, lat, lng, radiusKm)
    let total = 0
    if (cover.inside.length) {
      total += this.cellCount(scope, grid, cover.inside)
    }
    if (!cover.edge.length) return total
    const cellBoxes = edgeBoxes(cover.edge, this.tuning.edgeRows)
    this.meter.spend(cellBoxes.length * SEARCH_UNITS)
    const edgeOf = new Map<number, Run[]>()
    for (const run of cover.edge) {
      const list = edgeOf.get(run.row)
      if (list) list.push(run)
      else edgeOf.set(run.row, [run])
    }
    const rows = this.stmt(
      `SELECT j.key, r.id, r.min_lat, r.max_lat, r.min_lng, r.max_lng FROM json_each(?) j CROSS JOIN places_rtree r
       ON r.max_lat >= j.value ->> 0 AND r.min_lat <= j.value ->> 1 AND r.max_lng >= j.value ->> 2 AND r.min_lng <= j.value ->> 3 ` +
        `WHERE work_unit(1, r.id) AND $SCOPE`,
      scope,
    ).values(JSON.stringify(cellBoxes.map((b) => searchBox(grid, b))), ...Spatial.scopeArgs(scope)) as [number, ...BoxRow][]
    for (const [index, id, minLat, maxLat, minLng, maxLng] of rows) {
      // Each point once: only from the box that owns its cell (widened boxes overlap), and only when its
      // cell is on the edge (a box of several rows also covers inside cells).
      const box = cellBoxes[index]!
      const row = grid.row(minLat)
      if (row < box.fromRow || row > box.toRow) continue
      const column = grid.column(minLng)
      if (column < box.from || column > box.to) continue
      if (!edgeOf.get(row)?.some((run) => column >= run.from && column <= run.to)) continue
      if (this.inCircle(id, minLat, maxLat, minLng, maxLng, lat, lng, radiusKm)) total++
    }
    return total
  }

  /** Whether the point (known by its R*Tree box) is within the radius; exact coordinates only near the edge. */
  private inCircle(
    id: number,
    minLat: number,
    maxLat: number,
    minLng: number,
    maxLng: number,
    lat: number,
    lng: number,
    radiusKm: number,
  ): boolean {
    const d = haversineKm(lat, lng, (minLat + maxLat) / 2, (minLng + maxLng) / 2)
    // The point is at most this far (km) from its box's middle.
    const slack = (maxLat - minLat + maxLng - minLng) * KM_PER_DEG + 1e-6
    if (d + slack <= radiusKm) return true
    if (d - slack > radiusKm) return false
    const [[, exactLat, exactLng]] = this.exactOf([id]) as [ExactRow]
    return haversineKm(lat, lng, exactLat, exactLng) <= radiusKm
  }

  /**
   * The `k` nearest points within the radius, ordered by (distance, id), given the exact `total` in it.
   * Searches a circle of the radius that should hold ~2k points at the density of the 3 x 3 cells
   * around the centre, doubling it until it surely holds k (or is the whole circle): every point nearer
   * than the searched radius is in its box, so the k nearest found there are the k nearest of all.
   * Candidates are read as R*Tree boxes; exact coordinates are read only for those that can rank.
   */
  nearest(scope: CountryScope, lat: number, lng: number, radiusKm: number, k: number, total: number): NearHit[] {
    let searched =
      total <= 4 * k || total < this.tuning.sparseBelow
        ? radiusKm
        : Math.min(radiusKm, this.startRadius(scope, lat, lng, k) ?? radiusKm * Math.sqrt((2 * k) / total))
    for (;;) {
      const reach = Math.min(searched, radiusKm)
      const ids: number[] = []
      const low: number[] = []
      const high: number[] = []
      for (const box of circleBoxes(lat, lng, reach * (1 + 1e-9))) {
        for (const [id, minLat, maxLat, minLng, maxLng] of this.boxes(scope, box)) {
          const d = haversineKm(lat, lng, (minLat + maxLat) / 2, (minLng + maxLng) / 2)
          const slack = (maxLat - minLat + maxLng - minLng) * KM_PER_DEG + 1e-6
          if (d - slack > reach) continue
          ids.push(id)
          low.push(d - slack)
          high.push(d + slack)
        }
      }
      // `bound`: a distance within which at least k points surely lie, if the searched circle holds k.
      const sure = Float64Array.from(high.filter((h) => h <= reach)).sort()
      if (sure.length < k && searched < radiusKm) {
        searched = Math.min(radiusKm, searched * 2)
        continue
      }
      const bound = sure.length >= k ? sure[k - 1]! : reach
      const ranked: number[] = []
      for (let i = 0; i < ids.length; i++) if (low[i]! <= bound) ranked.push(ids[i]!)
      const hits: NearHit[] = []
      for (const [id, plat, plng] of this.exactOf(ranked)) {
        const km = haversineKm(lat, lng, plat, plng)
        if (km <= reach) hits.push({ id, km })
      }
      return smallest(hits, k)
    }
  }

  /** The radius expected to hold 2k points at the density of the 3 x 3 cells around the centre; undefined if they are empty. */
  private startRadius(scope: CountryScope, lat: number, lng: number, k: number): number | undefined {
    const grid = this.grids.at(-1)!
    const row = grid.row(lat)
    const column = grid.column(lng)
    if (column === 0 || column === grid.lngCells - 1) return undefined
    const runs: Run[] = []
    for (let r = Math.max(0, row - 1); r <= Math.min(grid.latCells - 1, row + 1); r++)
      runs.push({ row: r, from: column - 1, to: column + 1 })
    const n = this.cellCount(scope, grid, runs)
    if (!n) return undefined
    const side = grid.deg * KM_PER_DEG
    const area = runs.length * 3 * side * side * Math.max(0.01, Math.cos((lat * Math.PI) / 180))
    return Math.sqrt((2 * k * area) / (Math.PI * n))
  }

  /**
   * Points inside the polygons (a point in two parts counted once): the total and the `k` smallest ids
   * (dataset order). Candidates are tested at their R*Tree box's middle against the polygon's edges in
   * that latitude band; a point whose box an edge passes near is tested at its exact coordinates.
   */
  within(scope: CountryScope, polygons: Polygon[], k: number): { total: number; ids: number[] } {
    const ids: number[] = []
    const seen = polygons.length > 1 ? new Set<number>() : null
    for (const polygon of polygons) {
      this.meter.spend(SEARCH_UNITS)
      const prepared = new PreparedPolygon(polygon, (units) => this.meter.spend(units))
      for (const [id, minLat, maxLat, minLng, maxLng] of this.boxes(scope, prepared.box)) {
        if (seen?.has(id)) continue
        this.meter.spend(prepared.edgesNear((minLat + maxLat) / 2) / EDGES_PER_UNIT)
        const verdict = prepared.test((minLng + maxLng) / 2, (minLat + maxLat) / 2, maxLat - minLat + (maxLng - minLng) + 1e-9)
        const inside =
          verdict === UNSURE
            ? (() => {
                const [[, exactLat, exactLng]] = this.exactOf([id]) as [ExactRow]
                return inPolygon(exactLng, exactLat, polygon)
              })()
            : verdict === IN
        if (!inside) continue
        seen?.add(id)
        ids.push(id)
      }
    }
    const sorted = Float64Array.from(ids).sort()
    return { total: ids.length, ids: Array.from(sorted.subarray(0, k)) }
  }
}

/** Cells fromRow..toRow x from..to: several rows' edge runs searched at once. */
interface CellBox {
  fromRow: number
  toRow: number
  from: number
  to: number
}

/**
 * Edge runs grouped `rows` rows at a time, runs of a group whose columns lie within a few cells of each
 * other merged into one box, so the R*Tree is searched tens of times rather than once per run.
 * Boxes are disjoint in cells.
 */
function edgeBoxes(edge: Run[], rows: number): CellBox[] {
  const groups = new Map<number, Run[]>()
  for (const run of edge) {
    const g = Math.floor(run.row / rows)
    const list = groups.get(g)
    if (list) list.push(run)
    else groups.set(g, [run])
  }
  const boxes: CellBox[] = []
  for (const [g, runs] of groups) {
    runs.sort((a, b) => a.from - b.from)
    let box: CellBox | null = null
    for (const run of runs) {
      if (box && run.from <= box.to + 4) box.to = Math.max(box.to, run.to)
      else boxes.push((box = { fromRow: g * rows, toRow: g * rows + rows - 1, from: run.from, to: run.to }))
    }
  }
  return boxes
}

/** The widened box [south, north, west, east] of a box of cells. */
function searchBox(grid: Grid, box: CellBox): [number, number, number, number] {
  const [south, , west] = grid.bounds(box.fromRow, box.from)
  const [, north, , east] = grid.bounds(box.toRow, box.to)
  return [south, north, west, east]
}

const byDistance = (a: NearHit, b: NearHit) => a.km - b.km || a.id - b.id

/** The k smallest by (distance, id), sorted; a bounded sorted buffer when k is much smaller than the hits. */
export function smallest(hits: NearHit[], k: number): NearHit[] {
  if (k * 4 >= hits.length) return hits.sort(byDistance).slice(0, k)
  const best: NearHit[] = []
  for (const h of hits) {
    if (best.length === k && byDistance(h, best[k - 1]!) >= 0) continue
    let lo = 0
    let hi = best.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (byDistance(best[mid]!, h) <= 0) lo = mid + 1
      else hi = mid
    }
    best.splice(lo, 0, h)
    if (best.length > k) best.pop()
  }
  return best
}

const IN = 1
const OUT = 0
const UNSURE = 2

/** Largest box extent (degrees) a test may be asked about; far above a 32-bit float step. */
const MAX_SLACK_DEG = 1e-3

/**
 * A polygon's edges in flat typed arrays, bucketed by latitude band, for ray casting a point against
 * only the edges of its band (a city outline of thousands of vertices tests a few dozen edges).
 */
export class PreparedPolygon {
  readonly box: Box
  private readonly x1: Float64Array
  private readonly y1: Float64Array
  private readonly x2: Float64Array
  private readonly y2: Float64Array
  private readonly ring: Uint16Array
  private readonly rings: number
  private readonly bandStart: Uint32Array
  private readonly bandEdges: Uint32Array
  private readonly bands: number
  private readonly parity: Uint8Array

  /** `spend` is told the work of listing the edges per band (in units) before it is done. */
  constructor(polygon: Polygon, spend: (units: number) => void = () => {}) {
    let edges = 0
    for (const ring of polygon) edges += ring.length - 1
    this.x1 = new Float64Array(edges)
    this.y1 = new Float64Array(edges)
    this.x2 = new Float64Array(edges)
    this.y2 = new Float64Array(edges)
    this.ring = new Uint16Array(edges)
    this.rings = polygon.length
    this.parity = new Uint8Array(polygon.length)
    let minLat = 90
    let maxLat = -90
    let minLng = 180
    let maxLng = -180
    let e = 0
    polygon.forEach((ring, r) => {
      for (let i = 0; i + 1 < ring.length; i++, e++) {
        const [ax, ay] = ring[i]!
        const [bx, by] = ring[i + 1]!
        this.x1[e] = ax
        this.y1[e] = ay
        this.x2[e] = bx
        this.y2[e] = by
        this.ring[e] = r
        if (r === 0) {
          minLat = Math.min(minLat, ay)
          maxLat = Math.max(maxLat, ay)
          minLng = Math.min(minLng, ax)
          maxLng = Math.max(maxLng, ax)
        }
      }
    })
    this.box = { minLat, maxLat, minLng, maxLng }
    // Bands over the outer ring's latitude span; an edge is listed in every band its latitude span
    // (widened by MAX_SLACK_DEG, so edges near a point are found too) touches.
    this.bands = Math.max(1, Math.min(1024, Math.ceil(edges / 8)))
    const height = (maxLat - minLat) / this.bands || 1
    const bandOf = (y: number) => Math.min(this.bands - 1, Math.max(0, Math.floor((y - minLat) / height)))
    const span = (i: number): [number, number] => [
      bandOf(Math.min(this.y1[i]!, this.y2[i]!) - MAX_SLACK_DEG),
      bandOf(Math.max(this.y1[i]!, this.y2[i]!) + MAX_SLACK_DEG),
    ]
    // Edges per band from a difference array (O(edges + bands)), so the size of the listing (up to
    // edges x bands: 10 million for a 10,000-position comb) is known and paid for before it is made.
    const delta = new Int32Array(this.bands + 1)
    for (let i = 0; i < edges; i++) {
      const [a, b] = span(i)
      delta[a]!++
      delta[b + 1]!--
    }
    const counts = new Uint32Array(this.bands + 1)
    for (let band = 0, open = 0; band < this.bands; band++) {
      open += delta[band]!
      counts[band + 1] = counts[band]! + open
    }
    spend(counts[this.bands]! / EDGES_PER_UNIT)
    this.bandStart = counts
    this.bandEdges = new Uint32Array(counts[this.bands]!)
    const fill = counts.slice(0, this.bands)
    for (let i = 0; i < edges; i++) {
      const [a, b] = span(i)
      for (let band = a; band <= b; band++) this.bandEdges[fill[band]!++] = i
    }
    this.bandOf = bandOf
  }

  private readonly bandOf: (y: number) => number

  /** How many edges a test at latitude `y` visits: the work of testing a point there. */
  edgesNear(y: number): number {
    const band = this.bandOf(y)
    return this.bandStart[band + 1]! - this.bandStart[band]!
  }

  /**
   * IN or OUT for the point (x, y) = (lng, lat) when no edge passes within `slack` degrees of it (so
   * every point within `slack` has the same answer), UNSURE otherwise. Even-odd ray casting per ring:
   * inside the outer ring and outside every hole, as geo.ts's inPolygon.
   */
  test(x: number, y: number, slack: number): number {
    if (slack > MAX_SLACK_DEG) return UNSURE
    const { x1, y1, x2, y2, ring, parity } = this
    parity.fill(0)
    const band = this.bandOf(y)
    const end = this.bandStart[band + 1]!
    const slack2 = slack * slack
    for (let n = this.bandStart[band]!; n < end; n++) {
      const e = this.bandEdges[n]!
      const ax = x1[e]!
      const ay = y1[e]!
      const bx = x2[e]!
      const by = y2[e]!
      if (ay > y !== by > y && x < ((bx - ax) * (y - ay)) / (by - ay) + ax) parity[ring[e]!]! ^= 1
      // Distance from the point to the segment, only when the edge's box is within reach.
      if (x < Math.min(ax, bx) - slack || x > Math.max(ax, bx) + slack || y < Math.min(ay, by) - slack || y > Math.max(ay, by) + slack)
        continue
      const dx = bx - ax
      const dy = by - ay
      const len2 = dx * dx + dy * dy
      const t = len2 ? Math.max(0, Math.min(1, ((x - ax) * dx + (y - ay) * dy) / len2)) : 0
      const px = ax + t * dx - x
      const py = ay + t * dy - y
      if (px * px + py * py <= slack2) return UNSURE
    }
    if (!parity[0]) return OUT
    for (let r = 1; r < this.rings; r++) if (parity[r]) return OUT
    return IN
  }
}
