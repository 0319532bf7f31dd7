/**
 * The circle's cell cover, checked point by point against a haversine written here: every point of a
 * cell taken as wholly inside is within the radius (its corners, middle and random points, a float
 * step beyond its lines included), and every point within the radius (random, and just inside its
 * edge at every 0.1° of bearing) lies in an inside or an edge cell, with no cell listed twice. Centres include the antimeridian and a pole.
 */
import { describe, expect, test } from 'bun:test'
import { CELL_DEGS, circleCover, coverGrid, first, Grid, type Run } from '../../../src/domains/postal/grid.ts'
import { rng } from '../../support/random.ts'
import { distanceKm } from '../../support/geo.ts'

const cases = [
  { lat: 51.5074, lng: -0.1278, r: 25 },
  { lat: 52.52, lng: 13.4, r: 3.3 }, // centre on a cell corner
  { lat: 0.005, lng: 0.005, r: 11 }, // astride the equator and the prime meridian
  { lat: 65.5, lng: 180, r: 40 }, // on the antimeridian
  { lat: -41, lng: -179.99, r: 60 },
  { lat: 89.9, lng: 10, r: 30 }, // reaching the pole: whole rows
  { lat: -60, lng: 100, r: 0.4 },
  // Circles small enough for the finer grids (grid.ts FINE_COVER_ROWS) where the larger ones above are not.
  { lat: 65.5, lng: 180, r: 8 },
  { lat: -41, lng: -179.99, r: 6 },
  { lat: 89.995, lng: 10, r: 1 },
]

const keys = (grid: Grid, runs: Run[]) =>
  runs.flatMap((run) => Array.from({ length: run.to - run.from + 1 }, (_, i) => grid.key(run.row, run.from + i)))

// Every grid the artifact stores counts for covers the circles a radius count uses it for (the coarsest, all).
const grids = CELL_DEGS.map((deg) => new Grid(deg))
describe.each(grids)('circle cover', (grid) => {
  for (const c of cases.filter((c) => grid === grids.at(-1) || coverGrid(grids, c.lat, c.r) === grid)) {
    test(`${grid.deg}° cells: ${c.lat}, ${c.lng}, ${c.r} km`, () => {
      const centre = { lat: c.lat, lng: c.lng }
      const cover = circleCover(grid, c.lat, c.lng, c.r)
      const inside = keys(grid, cover.inside)
      const edge = keys(grid, cover.edge)
      const all = new Set([...inside, ...edge])
      expect(all.size).toBe(inside.length + edge.length)
      const random = rng(Math.round(c.lat * 1000 + c.lng))
      // Points of inside cells, up to a 32-bit float step beyond the cell's lines.
      const step = 2e-5
      let sampled = 0
      for (const run of cover.inside) {
        for (let column = run.from; column <= run.to; column += Math.max(1, Math.floor((run.to - run.from) / 40))) {
          const south = -90 + run.row * grid.deg
          const west = -180 + column * grid.deg
          const lats = [south - step, south + grid.deg + step, south + random() * grid.deg].map((v) => Math.max(-90, Math.min(90, v)))
          const lngs = [west - step, west + grid.deg + step, west + random() * grid.deg]
          for (const lat of lats)
            for (const lng of lngs) {
              sampled++
              if (distanceKm(centre, { lat, lng }) > c.r)
                throw new Error(
                  `cell ${run.row}/${column} taken as inside, but ${lat}, ${lng} is ${distanceKm(centre, { lat, lng })} km away`,
                )
            }
        }
      }
      // Random points of the circle (uniform in its box) lie in a listed cell.
      const dLat = (c.r / 6371.0088) * (180 / Math.PI)
      const dLng = Math.min(180, dLat / Math.max(0.001, Math.cos(((Math.abs(c.lat) + dLat) * Math.PI) / 180)))
      let within = 0
      for (let i = 0; i < 20_000; i++) {
        const lat = Math.max(-90, Math.min(90, c.lat + (random() * 2 - 1) * dLat))
        let lng = c.lng + (random() * 2 - 1) * dLng
        if (lng > 180) lng -= 360
        if (lng < -180) lng += 360
        if (distanceKm(centre, { lat, lng }) > c.r) continue
        within++
        const key = grid.key(grid.row(lat), grid.column(lng))
        if (!all.has(key)) throw new Error(`${lat}, ${lng} is within ${c.r} km but its cell is in neither list`)
      }
      expect(within).toBeGreaterThan(1000)
      // Points just inside the circle's edge, every 0.1° of bearing (destination-point formula).
      const toRad = Math.PI / 180
      const angular = (c.r * (1 - 1e-9)) / 6371.0088
      for (let b = 0; b < 3600; b++) {
        const bearing = (b / 10) * toRad
        const lat1 = c.lat * toRad
        const lat2 = Math.asin(Math.sin(lat1) * Math.cos(angular) + Math.cos(lat1) * Math.sin(angular) * Math.cos(bearing))
        let lng =
          c.lng +
          Math.atan2(Math.sin(bearing) * Math.sin(angular) * Math.cos(lat1), Math.cos(angular) - Math.sin(lat1) * Math.sin(lat2)) / toRad
        if (lng > 180) lng -= 360
        if (lng < -180) lng += 360
        const lat = lat2 / toRad
        const key = grid.key(grid.row(lat), grid.column(lng))
        if (!all.has(key)) throw new Error(`${lat}, ${lng} is on the edge of ${c.r} km but its cell is in neither list`)
      }
      if (c.r > 1) expect(sampled).toBeGreaterThan(0)
    })
  }
})

describe('first: the search of a row edge, from a guess', () => {
  test('finds what a scan from 0 finds, for every answer and guess, asking only steps in 0..max-1', () => {
    const max = 300
    // Answers past `max` too: then nothing holds before it, and `max` is the answer.
    for (const answer of [...Array.from({ length: 44 }, (_, i) => i * 7), max - 1, max, max + 5])
      for (let guess = -3; guess <= max + 3; guess += 5) {
        const holds = (t: number) => t >= answer
        const asked: number[] = []
        const found = first((t) => (asked.push(t), holds(t)), max, guess)
        let scanned = 0
        while (scanned < max && !holds(scanned)) scanned++
        expect({ answer, guess, found }).toEqual({ answer, guess, found: scanned })
        expect(asked.every((t) => Number.isInteger(t) && t >= 0 && t < max)).toBe(true)
      }
  })

  test('a guess d steps off costs about 2 log2(d) tests, not log2(max)', () => {
    const max = 18_002 // a row of 0.01° cells: half the columns, and one
    for (const [answer, guess] of [
      [36, 36],
      [36, 35],
      [36, 40],
      [5000, 4990],
      [5000, 0],
      [0, 5000],
    ]) {
      let asked = 0
      first((t) => (asked++, t >= answer!), max, guess!)
      const d = Math.abs(answer! - guess!)
      expect({ answer, guess, asked: asked <= 2 * Math.ceil(Math.log2(d + 1)) + 2 }).toEqual({ answer, guess, asked: true })
    }
  })
})
