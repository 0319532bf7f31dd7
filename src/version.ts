/** The app's version, from package.json: one module low enough for the HTTP layers and the CLI to share. */
import pkg from '../package.json' with { type: 'json' }

export const APP_VERSION: string = pkg.version
