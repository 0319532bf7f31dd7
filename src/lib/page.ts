/** A page of a list, as services take and give it (the HTTP query schema lives in http/routing/paging.ts). */
export interface Page {
  limit: number
  offset: number
}

/** One page of results and the number of matches before paging. */
export interface Paged<T> {
  total: number
  items: T[]
}
