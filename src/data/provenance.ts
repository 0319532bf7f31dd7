/**
 * What a dataset's sources say as a whole: the newest upstream date, the distinct licences and the
 * distinct credit lines. The build writes these into each manifest entry; readers (meta route, `almanac
 * version`) fall back to them for entries written before it did.
 */
export function provenance(sources: readonly { date: string; license: string; attribution: string }[]) {
  return {
    date:
      sources
        .map((s) => s.date)
        .sort()
        .at(-1) || null,
    license: [...new Set(sources.map((s) => s.license))].join('; ') || null,
    attribution: [...new Set(sources.map((s) => s.attribution).filter(Boolean))],
  }
}
