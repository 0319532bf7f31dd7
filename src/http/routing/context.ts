/**
 * What every handler may read besides the request: the response form. Domain route plugins `.use()` this
 * so the `form` member is typed; the name makes Elysia register it once however many plugins use it.
 *
 * The value is set for each request by the app's request hook (server.ts). A decorator overwritten
 * there costs nothing; a `derive` hook of its own cost about 0.7 µs a request.
 */
import { Elysia } from 'elysia'
import type { ResponseForm } from '../../config.ts'

export const requestContext = (defaultForm: ResponseForm) =>
  new Elysia({ name: 'almanac:context', seed: defaultForm }).decorate('form', defaultForm as ResponseForm)
