/** The baseline every HTTP benchmark compares against: bare Elysia answering a small JSON object. */
import { Elysia } from 'elysia'

const port = Number(process.env.PORT ?? 0)
const app = new Elysia().get('/', () => ({ hello: 'world' })).listen({ port, hostname: '127.0.0.1' })
console.log(`listening ${app.server!.port}`)
