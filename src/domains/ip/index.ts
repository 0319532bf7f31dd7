/** Placeholder until the ip domain lands: mounts nothing and needs no dataset. */
import { Elysia } from 'elysia'
import { defineDomain } from '../types.ts'

export default defineDomain({
  name: 'ip',
  prefixes: [],
  datasets: [],
  open: () => null,
  routes: () => new Elysia(),
})
