/**
 * The seven hashing routes (SPEC "Hashing") with their body schemas. The schema carries the SPEC ranges;
 * this server's ceilings (config `hash.*`) are enforced by the service and stated in each description.
 */
import { Elysia, t } from 'elysia'
import type { Config } from '../../config.ts'
import { requestContext } from '../../http/routing/context.ts'
import { fieldsQuery, namedInteger } from '../../http/routing/paging.ts'
import { callerOf } from '../../http/edge/exchange.ts'
import { one } from '../../http/reply/reply.ts'
import { routeDetail } from '../../http/routing/route-facts.ts'
import { present } from './present.ts'
import { digestSchema, kdfSchemas } from './schemas.ts'
import { DEFAULTS, DIGESTS, MAX_INPUT_BYTES, type HashService } from './service.ts'

const input = t.String({
  description:
    `The text to hash, encoded as UTF-8 (a lone surrogate becomes U+FFFD). At most ${MAX_INPUT_BYTES} bytes (256 KB) of ` +
    `UTF-8; longer input is refused with 413.`,
})

const DIGEST_LENGTH: Record<(typeof DIGESTS)[number], number> = { md5: 32, sha1: 40, sha256: 64, sha512: 128 }

const RESULT_NOTE =
  'The result is a Hash result: `algorithm` and `hash`; Form A (enveloped) KDF results add `params`, the parameters actually used. ' +
  "A job waits for a free worker and for room in this server's hashing memory budget (hash.memoryBudgetBytes, of which one caller " +
  'may hold half). A full queue, or a caller who already has hash.jobsPerCaller jobs running or waiting, answers 503 with ' +
  "Retry-After; a value over one of this server's ceilings (memory, work, rounds, lanes) answers 422 naming the field and the " +
  'ceiling (`ceilings[]`). An empty `input` is a 422.'

/** The input's 256 KB of UTF-8 even if every byte were escaped as two in JSON (quotes, backslashes, newlines), and the options. */
const HASH_BODY_LIMIT = 2 * MAX_INPUT_BYTES + 16 * 1024

/** What each password hash route answers (its OpenAPI description). */
const BCRYPT_DESCRIPTION =
  "A bcrypt hash in Modular Crypt Format, `$2b$<rounds>$<salt><hash>` (bcrypt's own base64 alphabet), with a fresh random salt on " +
  'every call. Inputs over 72 bytes are reduced to their raw SHA-512 digest before bcrypt instead of being silently truncated ' +
  `(Bun.password behaviour). ${RESULT_NOTE}`

const SCRYPT_DESCRIPTION =
  'An scrypt (RFC 7914) hash `$scrypt$ln=<log2 n>,r=<r>,p=<p>$<salt>$<hash>`: a fresh 16-byte random salt and a 32-byte key, both in ' +
  "standard base64 (RFC 4648 alphabet `A-Z a-z 0-9 + /`) without `=` padding. Parameters may be sent as n/r/p or as Form A's " +
  `cost_factor/block_size/parallelism. ${RESULT_NOTE}`

const ARGON2ID_DESCRIPTION =
  'An argon2id (RFC 9106, version 0x13) hash in PHC string format ' +
  '`$argon2id$v=19$m=<memory_cost>,t=<time_cost>,p=<parallelism>$<salt>$<hash>`: a fresh 16-byte random salt and a 32-byte tag, ' +
  `standard base64 without padding. ${RESULT_NOTE}`

export function hashRoutes(service: HashService, config: Config) {
  const c = config.hash
  const memory = service.ceilings
  const app = new Elysia({ prefix: '/hash' }).use(requestContext(config.responseForm))

  for (const algorithm of DIGESTS) {
    app.post('/' + algorithm, ({ body, form }) => one(present(service.digest(algorithm, body.input), form)), {
      body: t.Object({ input }, { examples: [{ input: 'hello' }] }),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        bodyLimit: HASH_BODY_LIMIT,
        summary: `${algorithm.toUpperCase()} digest`,
        description:
          `The ${algorithm} digest of the UTF-8 bytes of \`input\`, as ${DIGEST_LENGTH[algorithm]} lowercase hexadecimal ` +
          `characters. Deterministic: equal inputs give equal digests.`,
        response: {
          name: `${algorithm[0]!.toUpperCase()}${algorithm.slice(1)}Result`,
          enveloped: digestSchema(algorithm, DIGEST_LENGTH[algorithm]),
        },
      }),
    })
  }

  return app
    .post('/bcrypt', async ({ body, form, request }) => one(present(await service.bcrypt(body.input, body, callerOf(request)), form)), {
      body: t.Object(
        {
          input,
          rounds: t.Optional(
            namedInteger(
              'rounds',
              4,
              31,
              `Cost as log2 of the iteration count, 4-31 (default 12). This server's ceiling: ${c.bcryptMaxRounds} (hash.bcryptMaxRounds).`,
              DEFAULTS.bcrypt.rounds,
            ),
          ),
        },
        { examples: [{ input: 'correct horse battery staple', rounds: 10 }] },
      ),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        bodyLimit: HASH_BODY_LIMIT,
        summary: 'bcrypt password hash',
        description: BCRYPT_DESCRIPTION,
        response: { name: 'BcryptResult', ...kdfSchemas('bcrypt') },
      }),
    })
    .post('/scrypt', async ({ body, form, request }) => one(present(await service.scrypt(body.input, body, callerOf(request)), form)), {
      body: t.Object(
        {
          input,
          // No schema `default` here: a filled-in default under one spelling would clash with the other.
          n: t.Optional(
            namedInteger(
              'n',
              2,
              2 ** 32,
              `CPU/memory cost N: a power of two greater than 1 (default ${DEFAULTS.scrypt.n}). Form A name: cost_factor. 128·r·(n + 2 + ` +
                `p) bytes must not exceed this server's ceiling of ${memory.scryptBytes} bytes (the smaller of hash.scryptMaxMemoryBytes ` +
                `and half of hash.memoryBudgetBytes), nor n·r·p its work ceiling of ${c.scryptMaxWork} (hash.scryptMaxWork).`,
            ),
          ),
          r: t.Optional(namedInteger('r', 1, 2 ** 20, `Block size r (default ${DEFAULTS.scrypt.r}). Form A name: block_size.`)),
          p: t.Optional(
            namedInteger(
              'p',
              1,
              2 ** 20,
              `Parallelism p (default ${DEFAULTS.scrypt.p}); r·p < 2^30. Form A name: parallelism. This server's ` +
                `ceiling: ${c.scryptMaxParallelism} (hash.scryptMaxParallelism).`,
            ),
          ),
          cost_factor: t.Optional(
            namedInteger(
              'cost_factor',
              2,
              2 ** 32,
              `Form A name of n (default ${DEFAULTS.scrypt.n}); a power of two greater than 1. Either spelling is accepted; both with ` +
                `different values is a 422.`,
            ),
          ),
          block_size: t.Optional(namedInteger('block_size', 1, 2 ** 20, `Form A name of r (default ${DEFAULTS.scrypt.r}).`)),
          parallelism: t.Optional(namedInteger('parallelism', 1, 2 ** 20, `Form A name of p (default ${DEFAULTS.scrypt.p}).`)),
        },
        { examples: [{ input: 'correct horse battery staple', n: 16384, r: 8, p: 1 }] },
      ),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        bodyLimit: HASH_BODY_LIMIT,
        summary: 'scrypt password hash',
        description: SCRYPT_DESCRIPTION,
        response: { name: 'ScryptResult', ...kdfSchemas('scrypt') },
      }),
    })
    .post('/argon2id', async ({ body, form, request }) => one(present(await service.argon2id(body.input, body, callerOf(request)), form)), {
      body: t.Object(
        {
          input,
          time_cost: t.Optional(
            namedInteger(
              'time_cost',
              1,
              2 ** 32 - 1,
              `Iterations (passes), default 3. This server's ceiling: ${c.argon2MaxTimeCost} (hash.argon2MaxTimeCost).`,
              DEFAULTS.argon2id.time_cost,
            ),
          ),
          memory_cost: t.Optional(
            namedInteger(
              'memory_cost',
              8,
              2 ** 32 - 1,
              `Memory in KiB, default 65536; at least 8 × parallelism. This server's ceiling: ${memory.argon2KiB} KiB (the smaller of ` +
                `hash.argon2MaxMemoryKiB and half of hash.memoryBudgetBytes).`,
              DEFAULTS.argon2id.memory_cost,
            ),
          ),
          parallelism: t.Optional(
            namedInteger(
              'parallelism',
              1,
              2 ** 24 - 1,
              `Lanes, default 4. This server's ceiling: ${c.argon2MaxParallelism} (hash.argon2MaxParallelism).`,
              DEFAULTS.argon2id.parallelism,
            ),
          ),
        },
        { examples: [{ input: 'correct horse battery staple', time_cost: 2, memory_cost: 19456, parallelism: 1 }] },
      ),
      query: t.Object(fieldsQuery),
      detail: routeDetail({
        bodyLimit: HASH_BODY_LIMIT,
        summary: 'argon2id password hash',
        description: ARGON2ID_DESCRIPTION,
        response: { name: 'Argon2idResult', ...kdfSchemas('argon2id') },
      }),
    })
}
