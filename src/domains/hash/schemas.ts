/** Response schemas of the Hash result (SPEC "Hash result"), for the OpenAPI document. */
import { t } from 'elysia'

// Generic in the name, so each schema's static type holds its algorithm as a literal.
const algorithm = <N extends string>(name: N) => t.Literal(name, { description: 'The algorithm used.' })

/** A digest: the same in both forms. */
export const digestSchema = <N extends string>(name: N, hexLength: number) =>
  t.Object({
    algorithm: algorithm(name),
    hash: t.String({ description: `${hexLength} lowercase hexadecimal characters.`, pattern: `^[0-9a-f]{${hexLength}}$` }),
  })

const kdfHash = (format: string, example: string) =>
  t.String({ description: `Self-describing hash string with a random salt: ${format}.`, examples: [example] })

const count = (description: string) => t.Integer({ minimum: 1, description })

/** The parameters Form A echoes for each KDF (scrypt's under Form A's names, SPEC Hashing rule 2). */
const KDF_PARAMS = {
  bcrypt: t.Object({ rounds: count('Cost as log2 of the iteration count.') }),
  scrypt: t.Object({
    cost_factor: count('N, the CPU/memory cost.'),
    block_size: count('r, the block size.'),
    parallelism: count('p, the parallelism.'),
  }),
  argon2id: t.Object({ time_cost: count('Iterations.'), memory_cost: count('Memory in KiB.'), parallelism: count('Lanes.') }),
}

const KDF_FORMATS = {
  bcrypt: kdfHash('`$2b$<rounds>$<22 characters of salt><31 of hash>`', '$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW'),
  scrypt: kdfHash(
    '`$scrypt$ln=<log2 n>,r=<r>,p=<p>$<salt>$<hash>`',
    '$scrypt$ln=14,r=8,p=1$DUSkMBBYfYbdP2dIGA0jGw$Sf1dWp7f9I0S1qw+BVn8WWUZuoLXnPYqPzlgVKnvLrg',
  ),
  argon2id: kdfHash(
    '`$argon2id$v=19$m=<memory_cost>,t=<time_cost>,p=<parallelism>$<salt>$<hash>`',
    '$argon2id$v=19$m=65536,t=3,p=4$MNuh1S19xsYlOqiCkBcQfw$K6dpDtg6P3O/IKZowoutLN0szgwpudT4h/zQH1wep2Q',
  ),
}

/** A KDF result in each form: Form A adds `params`, the parameters actually used. */
export const kdfSchemas = <N extends keyof typeof KDF_PARAMS>(name: N) => ({
  enveloped: t.Object({ algorithm: algorithm(name), hash: KDF_FORMATS[name], params: KDF_PARAMS[name] }),
  bare: t.Object({ algorithm: algorithm(name), hash: KDF_FORMATS[name] }),
})
