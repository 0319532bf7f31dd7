/** Placeholder until the hash domain lands: mounts nothing and needs no dataset. */
import { Elysia } from 'elysia'
import { defineDomain } from '../types.ts'

export default defineDomain({
  name: 'hash',
  prefixes: [],
  datasets: [],
  open: () => null,
  routes: () => new Elysia(),
})
