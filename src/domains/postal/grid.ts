/**
 * A fixed latitude/longitude grid whose point counts are stored in the artifact (`cells`, running counts
 * along each row), so an exact radius count reads the counts of cells that lie wholly inside the circle
 * and measures only the points of cells the circle's edge crosses.
 *
 * A point's cell is computed from its R*Tree box corner (`min_lat`, `min_lng`: the 32-bit float
 * SQLite stored, rounded down), never from the exact coordinate: the build and the query read the same
 * values from the R*Tree and compute the same cell, so a candidate found at query time is placed in
 * exactly the cell whose count holds it. The exact coordinate lies within one float step (< 2 m) above
 * that corner, so cell bounds are widened by MARGIN_DEG whenever a cell is classified.
 */
import { EARTH_RADIUS_KM } from './geo.ts'

/**
 * The cell sizes whose counts the artifact stores, in degrees, finest first; it records the sizes it was
 * built with. A radius count covers its circle with the finest grid whose cover has at most
 * `FINE_COVER_ROWS` rows, else the coarsest: small cells keep the edge band of a small circle narrow
 * (London 5 km: 5,624 edge points read at 0.01°, 1,471 at 0.0025°), large ones keep a wide circle's rows
 * few (docs/postal.md, "Radius counts from running counts").
 */
export const CELL_DEGS = [0.0025, 0.01] as const
/** Widening of a cell's bounds: far more than a 32-bit float step at 180° (1.5e-5°). */
export const MARGIN_DEG = 1e-4

const RAD = Math.PI / 180

export class Grid {
  readonly latCells: number
  readonly lngCells: number
  constructor(readonly deg: number) {
    this.latCells = Math.round(180 / deg)
    this.lngCells = Math.round(360 / deg)
  }

  row(lat: number): number {
    return Math.min(this.latCells - 1, Math.max(0, Math.floor((lat + 90) / this.deg)))
  }

  column(lng: number): number {
    return Math.min(this.lngCells - 1, Math.max(0, Math.floor((lng + 180) / this.deg)))
  }

  /** Cells per degree: the grid's name in the artifact (`cells.per_deg`). */
  get perDeg(): number {
    return Math.round(1 / this.deg)
  }

  /** The stored key of a cell: row-major, so one row's consecutive columns are one key range. */
  key(row: number, column: number): number {
    return row * this.lngCells + column
  }

  /** The row of a stored key (`key`'s inverse for the row). */
  rowOfKey(key: number): number {
    return Math.floor(key / this.lngCells)
  }

  /** The cell of an R*Tree entry, from its lower corner. */
  keyOf(minLat: number, minLng: number): number {
    return this.key(this.row(minLat), this.column(minLng))
  }

  /** Bounds of a cell widened by MARGIN_DEG, [south, north, west, east]; `column` may be unwrapped. */
  bounds(row: number, column: number): [number, number, number, number] {
    return [
      Math.max(-90, -90 + row * this.deg - MARGIN_DEG),
      Math.min(90, -90 + (row + 1) * this.deg + MARGIN_DEG),
      -180 + column * this.deg - MARGIN_DEG,
      -180 + (column + 1) * this.deg + MARGIN_DEG,
    ]
  }
}

/** A run of cells of one row, columns `from..to` inclusive (stored indices, not wrapped). */
export interface Run {
  row: number
  from: number
  to: number
}

export interface CircleCover {
  /** Cells certainly inside the circle: their stored counts are added as they are. */
  inside: Run[]
  /** Cells the circle's edge may cross: their points are measured one by one. */
  edge: Run[]
}

/** Rows a circle's cover may have in a grid finer than the coarsest (`CELL_DEGS`). */
export const FINE_COVER_ROWS = 100

/** Grid rows `circleCover` classifies for this circle (its work is a few binary searches per row). */
export function coverRows(grid: Grid, lat0: number, radiusKm: number): number {
  const dLatDeg = radiusKm / EARTH_RADIUS_KM / RAD
  return grid.row(lat0 + dLatDeg + MARGIN_DEG) - grid.row(lat0 - dLatDeg - MARGIN_DEG) + 1
}

/**
 * The grid a radius count covers this circle with: the finest of `grids` (finest first) whose cover has at
 * most FINE_COVER_ROWS rows, so a small circle's edge band stays narrow, else the coarsest.
 */
export function coverGrid(grids: readonly Grid[], lat0: number, radiusKm: number): Grid {
  return grids.find((g) => coverRows(g, lat0, radiusKm) <= FINE_COVER_ROWS) ?? grids.at(-1)!
}

/**
 * Which cells lie wholly inside the circle and which the edge may cross. Per row, cells are classified
 * by rigorous bounds of the haversine term a = sin²(Δφ/2) + cos φ0 · cos φ · sin²(Δλ/2) over the
 * widened cell (each factor bounded separately), and since both bounds grow with the column's distance
 * from the centre, the inside run and the edge runs are found by binary search.
 */
export function circleCover(grid: Grid, lat0: number, lng0: number, radiusKm: number): CircleCover {
  const angular = radiusKm / EARTH_RADIUS_KM
  const limit = Math.sin(angular / 2) ** 2
  const insideBelow = limit * (1 - 1e-9)
  const outsideAbove = limit * (1 + 1e-9)
  const cosLat0 = Math.cos(lat0 * RAD)
  const dLatDeg = angular / RAD
  const inside: Run[] = []
  const edge: Run[] = []
  const n = grid.lngCells
  const centre = Math.floor((lng0 + 180) / grid.deg)
  const half = Math.ceil(180 / grid.deg) + 1
  const sin2 = (x: number) => Math.sin(x / 2) ** 2
  // The last row's answers: a row's edges are a few columns from its neighbour's.
  let guess = [0, 0, 0, 0]
  for (let row = grid.row(lat0 - dLatDeg - MARGIN_DEG); row <= grid.row(lat0 + dLatDeg + MARGIN_DEG); row++) {
    const [south, north] = grid.bounds(row, 0)
    const dLatMax = Math.max(Math.abs(south - lat0), Math.abs(north - lat0)) * RAD
    const dLatMin = lat0 >= south && lat0 <= north ? 0 : Math.min(Math.abs(south - lat0), Math.abs(north - lat0)) * RAD
    const cosMax = south <= 0 && north >= 0 ? 1 : Math.max(Math.cos(south * RAD), Math.cos(north * RAD))
    const cosMin = Math.max(0, Math.min(Math.cos(south * RAD), Math.cos(north * RAD)))
    const latMax = sin2(dLatMax)
    const latMin = sin2(dLatMin)
    // Longitude offsets (radians, capped at π) of a column's widened bounds from the centre.
    const offsets = (column: number): [number, number] => {
      const [, , west, east] = grid.bounds(row, column)
      const far = Math.min(Math.PI, Math.max(Math.abs(west - lng0), Math.abs(east - lng0)) * RAD)
      const near = lng0 >= west && lng0 <= east ? 0 : Math.min(Math.PI, Math.min(Math.abs(west - lng0), Math.abs(east - lng0)) * RAD)
      return [near, far]
    }
    const isInside = (column: number) => latMax + cosLat0 * cosMax * sin2(offsets(column)[1]) < insideBelow
    const isOutside = (column: number) => latMin + cosLat0 * cosMin * sin2(offsets(column)[0]) > outsideAbove
    if (isOutside(centre)) continue
    const notInside = (column: number) => !isInside(column)
    // Steps from the centre column (west, east) where the cells stop being inside and start being outside.
    const innerW = first((t) => notInside(centre - t), half + 1, guess[0])
    const innerE = first((t) => notInside(centre + t), half + 1, guess[1])
    const outerW = first((t) => isOutside(centre - t), half + 1, guess[2])
    const outerE = first((t) => isOutside(centre + t), half + 1, guess[3])
    guess = [innerW, innerE, outerW, outerE]
    const innerWest = centre - innerW + 1
    const innerEast = centre + innerE - 1
    const outerWest = centre - outerW + 1
    const outerEast = centre + outerE - 1
    const hasInner = innerEast >= innerWest
    if (hasInner && innerEast - innerWest + 1 >= n) {
      inside.push({ row, from: 0, to: n - 1 })
      continue
    }
    if (hasInner) pushWrapped(inside, row, innerWest, innerEast, n)
    if (outerEast - outerWest + 1 >= n) {
      // The circle covers every longitude of this row: the edge is the rest of the row.
      if (hasInner) pushWrapped(edge, row, innerEast + 1, innerWest - 1 + n, n)
      else edge.push({ row, from: 0, to: n - 1 })
    } else if (hasInner) {
      if (outerWest <= innerWest - 1) pushWrapped(edge, row, outerWest, innerWest - 1, n)
      if (innerEast + 1 <= outerEast) pushWrapped(edge, row, innerEast + 1, outerEast, n)
    } else {
      pushWrapped(edge, row, outerWest, outerEast, n)
    }
  }
  return { inside, edge }
}

/**
 * The first step t in 0..max where `holds` is true, `holds` being false up to some step and true from there on
 * (true at `max` without asking it): the binary search's answer, found from `guess` by steps that double away
 * from it and then halve, so a guess a few steps off costs a few tests rather than log2(max) ~ 15.
 */
export function first(holds: (t: number) => boolean, max: number, guess: number): number {
  const test = (t: number) => t >= max || holds(t)
  // The answer is in (lo, hi]: `test(hi)` is true, and `lo` is -1 or a step where it is false.
  let lo: number
  let hi: number
  const g = Math.min(Math.max(guess, 0), max)
  if (test(g)) {
    hi = g
    let step = 1
    for (lo = hi - step; lo >= 0 && test(lo); lo = hi - step) {
      hi = lo
      step *= 2
    }
    lo = Math.max(lo, -1)
  } else {
    lo = g
    let step = 1
    for (hi = lo + step; hi < max && !test(hi); hi = lo + step) {
      lo = hi
      step *= 2
    }
    hi = Math.min(hi, max)
  }
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if (test(mid)) hi = mid
    else lo = mid
  }
  return hi
}

/** Adds columns from..to (unwrapped, at most n of them) as one or two runs of stored columns. */
function pushWrapped(runs: Run[], row: number, from: number, to: number, n: number) {
  const shift = Math.floor(from / n) * n
  const a = from - shift
  const b = to - shift
  if (b < n) runs.push({ row, from: a, to: b })
  else {
    runs.push({ row, from: a, to: n - 1 })
    runs.push({ row, from: 0, to: b - n })
  }
}
