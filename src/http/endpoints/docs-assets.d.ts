// Files imported `with { type: 'file' }` in docs.ts: Bun gives their path (embedded in a compiled executable).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/favicon-32x32.png' {
  const path: string
  export default path
}
