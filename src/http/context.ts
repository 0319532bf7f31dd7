/**
 * What every handler may read besides the request: the response form. Domain route plugins `.use()` this
 * so the `form` member is typed; the name makes Elysia register it once however many plugins use it.
 */
import { Elysia } from 'elysia'
import type { ResponseForm } from '../config.ts'
import { formOf } from './reply.ts'

export const requestContext = (defaultForm: ResponseForm) =>
  new Elysia({ name: 'almanac:context', seed: defaultForm }).derive({ as: 'global' }, ({ request }) => ({
    form: formOf(request, defaultForm),
  }))
