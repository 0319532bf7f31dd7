/**
 * The same bare-Elysia hello-world as `hello.ts`, but served the way `almanac serve` serves: every request
 * through `Bun.serve({ fetch: app.handle })` (Elysia's router in JavaScript), instead of `.listen()`, which
 * hands each route to Bun's native router. Separates the cost of that choice from the cost of our layers.
 */
import { Elysia } from 'elysia'

const port = Number(process.env.PORT ?? 0)
const app = new Elysia().get('/', () => ({ hello: 'world' }))
const server = Bun.serve({ port, hostname: '127.0.0.1', fetch: (req) => app.handle(req), development: false })
console.log(`listening ${server.port}`)
