// The console's files, imported `with { type: 'file' }` in console.ts: Bun gives their path (embedded in a
// compiled executable). The page (`index.html`) is typed by bun-types as an HTML bundle and cast there.
declare module '*/console/console.js' {
  const path: string
  export default path
}
declare module '*/console/charts.js' {
  const path: string
  export default path
}
declare module '*/console/console.css' {
  const path: string
  export default path
}
