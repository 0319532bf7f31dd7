/** The part of npm s3rver (MIT, a devDependency) the S3 test uses. */
declare module 's3rver' {
  export default class S3rver {
    constructor(options: {
      port: number
      address: string
      silent?: boolean
      directory: string
      serviceEndpoint?: string
      configureBuckets?: { name: string; configs: unknown[] }[]
    })
    run(): Promise<{ address: string; port: number }>
    close(): Promise<void>
  }
}
