/**
 * The one module that knows how Elysia keeps a route (`app.routes`: method, path, and the `hooks` holding its
 * schemas and `detail`) and the app's `server`. Everything else reads a route's facts from the route table
 * (route-table.ts), compiled from what `declaredRoutes` returns here; a newer Elysia that stores routes
 * differently is mended in this file alone.
 */
import { toOpenAPISchema } from '@elysiajs/openapi'
import type { TSchema } from '@sinclair/typebox'
import { t, type AnyElysia } from 'elysia'
import { FACTS_KEY, type RouteFacts } from './route-facts.ts'
import { closeSchema } from './strict-inputs.ts'

/** A route as it was declared: what the route table compiles. */
export interface DeclaredRoute {
  method: string
  /** The path as Elysia's router reports it in hooks (`route`), trailing slash and all. */
  path: string
  /** Its body schema: a route with one takes JSON. */
  body?: TSchema
  facts?: RouteFacts
}

interface ElysiaHooks {
  body?: TSchema
  query?: TSchema
  detail?: Record<string, unknown>
}

const hooksOf = (route: { hooks?: unknown }) => route.hooks as ElysiaHooks | undefined

/** Every route of the finished app, with its body schema and declared facts. */
export function declaredRoutes(app: AnyElysia): DeclaredRoute[] {
  return app.routes.map((route) => {
    const hooks = hooksOf(route)
    return { method: route.method, path: route.path, body: hooks?.body, facts: hooks?.detail?.[FACTS_KEY] as RouteFacts | undefined }
  })
}

/**
 * Closes the body and query schemas of `plugin`'s routes (strict-inputs.ts), and gives a route without a
 * query schema an empty one, before the plugin is mounted: the app builds each route's validators from
 * these schemas as it takes them.
 */
export function closeInputs(plugin: AnyElysia): void {
  for (const route of plugin.routes) {
    const hooks = ((route as { hooks?: ElysiaHooks }).hooks ??= {})
    hooks.query ??= t.Object({})
    closeSchema(hooks.query)
    closeSchema(hooks.body)
  }
}

/** The OpenAPI document `@elysiajs/openapi` generates from the app's routes (openapi.ts completes it). */
export const generatedDocument = (app: AnyElysia): Record<string, any> => toOpenAPISchema(app, { staticFile: false }) as Record<string, any>

/** Hands the app Bun's server: handlers read the TCP peer through Elysia's `server` (app.handle alone leaves it null). */
export const attachServer = (app: AnyElysia, server: unknown): void => void ((app as unknown as { server: unknown }).server = server)
