// js-yaml 4 ships no types; the ua data reader uses only `load` (definitions.ts).
declare module 'js-yaml' {
  export function load(text: string, options?: { filename?: string }): unknown
}
