/** Where png and svg images go, and how a caller gets them back: a local folder or an S3 bucket. */

export interface StoredObject {
  /** `<sha256 of the bytes>.<png|svg>`: the same image is one object however often it is asked for. */
  name: string
  bytes: Uint8Array
  contentType: string
}

export interface ObjectStore {
  /** Longest link lifetime the store can sign, in seconds (S3 presigned URLs: 7 days). */
  readonly maxTtl: number
  /** Keeps the object until at least `expires` (Unix seconds); a full or failing store is a 503. */
  put(object: StoredObject, expires: number): Promise<void>
  /**
   * An absolute URL that serves the object until `expires`. `origin` is this server's, for local links;
   * `now` (Unix seconds) the time `expires` was counted from, so a presigned link lives exactly the ttl
   * asked for, however long the upload took.
   */
  link(name: string, expires: number, origin: string, now: number): string
  close(): void
}

export const CONTENT_TYPES = new Map([
  ['png', 'image/png'],
  ['svg', 'image/svg+xml'],
])
