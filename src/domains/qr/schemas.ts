/** TypeBox schemas of the QR routes: the common parameters (SPEC "QR codes") and the QR result. */
import { t } from 'elysia'
import { namedInteger } from '../../http/routing/paging.ts'
import { COLOR_PATTERN, MIN_CONTRAST } from './colors.ts'
import { EC_LEVELS, EC_RECOVERY } from './matrix.ts'
import { PRESETS } from './payloads.ts'
import { DEFAULTS, FORMATS, RANGES } from './service.ts'

const color = (name: 'fg_color' | 'bg_color', fallback: string, role: string) =>
  t.String({
    pattern: COLOR_PATTERN,
    maxLength: 7,
    description:
      `${role} colour, \`#RGB\` or \`#RRGGBB\`, case-insensitive (default ${fallback}). Applied to png and base64; svg is ` +
      `always black on white. A pair with a contrast ratio under ${MIN_CONTRAST}:1, or a foreground lighter than the background, adds a ` +
      `warning.`,
    examples: [fallback],
    error: `${name}: expected a colour #RGB or #RRGGBB`,
  })

/** The parameters every QR route takes besides its payload fields. */
export const commonParameters = {
  format: t.Optional(
    t.UnionEnum(FORMATS, {
      default: DEFAULTS.format,
      description:
        'png and svg are stored and returned as a signed link (`url`, `expires`); base64 returns a PNG inline as `data_uri` and stores ' +
        'nothing.',
      error: 'format: expected png, svg or base64',
    }),
  ),
  size: t.Optional(
    namedInteger(
      'size',
      RANGES.size[0],
      RANGES.size[1],
      `Width = height of the PNG in pixels, ${RANGES.size[0]}-${RANGES.size[1]} (default ${DEFAULTS.size}), quiet zone included; exact. ` +
        `Ignored for svg. A size smaller than the code's modules (quiet zone included) is a 422 stating the least size; under 2 pixels a ` +
        `module adds a warning.`,
    ),
  ),
  fg_color: t.Optional(color('fg_color', DEFAULTS.fg_color, 'Module (foreground)')),
  bg_color: t.Optional(color('bg_color', DEFAULTS.bg_color, 'Background')),
  error_correction: t.Optional(
    t.UnionEnum(EC_LEVELS, {
      default: DEFAULTS.error_correction,
      description:
        `Error correction level: ${EC_LEVELS.map((l) => `${l} (about ${EC_RECOVERY[l]} recovery)`).join(', ')}. Higher levels ` +
        `hold less: at L a code holds at most 7089 digits, 4296 alphanumeric characters or 2953 bytes; at H 3057, 1852 or 1273. A ` +
        `payload over the level's capacity is a 422 stating it.`,
      error: 'error_correction: expected L, M, Q or H',
    }),
  ),
  margin: t.Optional(
    namedInteger(
      'margin',
      RANGES.margin[0],
      RANGES.margin[1],
      `Quiet zone around the code, in modules, ${RANGES.margin[0]}-${RANGES.margin[1]} (default ${DEFAULTS.margin}; ISO/IEC 18004 asks ` +
        `for 4).`,
      DEFAULTS.margin,
    ),
  ),
  ttl: t.Optional(
    namedInteger(
      'ttl',
      RANGES.ttl[0],
      RANGES.ttl[1],
      `Seconds the link works, ${RANGES.ttl[0]}-${RANGES.ttl[1]} (default ${DEFAULTS.ttl}). Ignored for base64. With an S3 store, ` +
        `presigned links live at most 604800 s (7 days): a longer ttl is cut to that, with a warning.`,
    ),
  ),
}

export const QrResultSchema = t.Object(
  {
    url: t.Optional(
      t.String({
        description:
          'png, svg: absolute signed link to the image (a local link under /files/qr/, or a presigned S3 URL). Absent for base64.',
      }),
    ),
    format: t.UnionEnum(FORMATS),
    expires: t.Optional(t.Integer({ description: 'png, svg: Unix time (seconds) when `url` stops working. Absent for base64.' })),
    preset: t.UnionEnum(PRESETS, { description: 'The endpoint that made the code.' }),
    data_uri: t.Optional(t.String({ description: 'base64 only: `data:image/png;base64,...`.' })),
    size: t.Union([t.Integer(), t.Null()], { description: 'Pixels per side of the PNG; null for svg.' }),
    fg_color: t.String({ description: 'Foreground used, `#RRGGBB` (svg: #000000).' }),
    bg_color: t.String({ description: 'Background used, `#RRGGBB` (svg: #FFFFFF).' }),
    error_correction: t.UnionEnum(EC_LEVELS),
    margin: t.Integer({ description: 'Quiet zone in modules.' }),
    version: t.Integer({ minimum: 1, maximum: 40, description: 'QR version (1-40) the payload needed.' }),
    modules: t.Integer({ minimum: 21, maximum: 177, description: 'Modules per side, quiet zone excluded (17 + 4 × version).' }),
    warnings: t.Array(t.String(), {
      description:
        'Why the code may not scan (low contrast, inverted colours, modules under 2 pixels), or which options were ignored or cut. Empty ' +
        'when none.',
    }),
  },
  { description: 'QR result: the same object in both forms; Form A wraps it in `{status, data, error}`.' },
)
