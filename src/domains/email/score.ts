/**
 * The SPEC's scoring, exactly: invalid syntax is 100 (critical) with no further checks; otherwise no MX
 * +30, disposable +35, domain age under 7 days +30 or under 30 days +20, abuse list +25, free provider +5,
 * capped at 100. Tiers: low 0-25, medium 26-50, high 51-75, critical 76-100. A check that could not be
 * performed adds nothing.
 */
export type RiskTier = 'low' | 'medium' | 'high' | 'critical'

export const POINTS = { no_mx: 30, disposable: 35, age_under_7_days: 30, age_under_30_days: 20, abuse_list: 25, free_provider: 5 } as const

export type RiskFactor = keyof typeof POINTS | 'invalid_syntax'

export interface Signals {
  validSyntax: boolean
  /** false: no MX records (an implicit MX, an address record alone, counts as none); null: unknown. */
  mx: boolean | null
  disposable: boolean
  ageDays: number | null
  abuse: boolean
  free: boolean
}

export function tierOf(score: number): RiskTier {
  if (score <= 25) return 'low'
  if (score <= 50) return 'medium'
  if (score <= 75) return 'high'
  return 'critical'
}

export function score(s: Signals): { score: number; tier: RiskTier; factors: { factor: RiskFactor; points: number }[] } {
  if (!s.validSyntax) return { score: 100, tier: 'critical', factors: [{ factor: 'invalid_syntax', points: 100 }] }
  const factors: { factor: RiskFactor; points: number }[] = []
  const add = (factor: keyof typeof POINTS) => factors.push({ factor, points: POINTS[factor] })
  if (s.mx === false) add('no_mx')
  if (s.disposable) add('disposable')
  if (s.ageDays !== null && s.ageDays < 7) add('age_under_7_days')
  else if (s.ageDays !== null && s.ageDays < 30) add('age_under_30_days')
  if (s.abuse) add('abuse_list')
  if (s.free) add('free_provider')
  const total = Math.min(
    100,
    factors.reduce((n, f) => n + f.points, 0),
  )
  return { score: total, tier: tierOf(total), factors }
}
