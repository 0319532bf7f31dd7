/** Placeholder until the postal domain lands: mounts nothing and needs no dataset. */
import { Elysia } from 'elysia'
import { defineDomain } from '../types.ts'

export default defineDomain({
  name: 'postal',
  prefixes: [],
  datasets: [],
  open: () => null,
  routes: () => new Elysia(),
})
