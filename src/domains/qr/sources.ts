/** Upstream sources of the qr domain: none. The encoder (npm `qrcode`, MIT) is code, credited in NOTICE.md. */
import type { Source } from '../../data/types.ts'

export const qrSources: Source[] = []
