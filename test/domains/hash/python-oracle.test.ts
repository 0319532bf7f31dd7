/**
 * Independent implementations: Debian's python3-bcrypt and python3-argon2 (argon2-cffi over the reference
 * C library) and CPython's hashlib (OpenSSL) verify what the server produced. `.ci/run` installs them.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import hash from '../../../src/domains/hash/index.ts'
import { testApp, type TestApp } from '../../support/app.ts'
import { pythonJson } from '../../support/python.ts'

setDefaultTimeout(120_000)

// Reads [{algorithm, input, hash}] on stdin; prints one verdict per item.
const VERIFY = `
import sys, json, base64, hashlib, bcrypt, argon2
def b64(s): return base64.b64decode(s + '=' * (-len(s) % 4))
out = []
for item in json.load(sys.stdin):
    pw, h, alg = item['input'].encode('utf-8'), item['hash'], item['algorithm']
    if alg == 'bcrypt':
        out.append(bcrypt.checkpw(pw, h.encode()))
    elif alg == 'argon2id':
        try:
            out.append(argon2.PasswordHasher().verify(h, pw))
        except argon2.exceptions.VerifyMismatchError:
            out.append(False)
    elif alg == 'scrypt':
        _, _, params, salt, key = h.split('$')
        p = dict(kv.split('=') for kv in params.split(','))
        n, r, par = 2 ** int(p['ln']), int(p['r']), int(p['p'])
        k = b64(key)
        out.append(hashlib.scrypt(pw, salt=b64(salt), n=n, r=r, p=par, dklen=len(k), maxmem=256 * n * r + 2 ** 20) == k)
    else:
        out.append(hashlib.new(alg, pw).hexdigest() == h)
print(json.dumps(out))
`

let app: TestApp
beforeAll(async () => {
  app = await testApp({ domains: [hash] })
})
afterAll(() => app.close())

test('python3-bcrypt, python3-argon2 and hashlib accept the hashes (and reject a wrong input)', async () => {
  const cases: { path: string; body: Record<string, unknown> }[] = [
    { path: 'bcrypt', body: { input: 'correct horse battery staple', rounds: 5 } },
    { path: 'bcrypt', body: { input: 'pässwörd ✓', rounds: 4 } },
    { path: 'scrypt', body: { input: 'correct horse battery staple', n: 1024, r: 8, p: 2 } },
    { path: 'scrypt', body: { input: 'pässwörd ✓', cost_factor: 4096, block_size: 4, parallelism: 1 } },
    { path: 'argon2id', body: { input: 'correct horse battery staple', time_cost: 2, memory_cost: 1024, parallelism: 4 } },
    { path: 'argon2id', body: { input: 'pässwörd ✓', time_cost: 1, memory_cost: 512, parallelism: 1 } },
    { path: 'md5', body: { input: 'pässwörd ✓' } },
    { path: 'sha1', body: { input: 'pässwörd ✓' } },
    { path: 'sha256', body: { input: 'pässwörd ✓' } },
    { path: 'sha512', body: { input: 'pässwörd ✓' } },
  ]
  const produced: { algorithm: string; input: string; hash: string }[] = []
  for (const c of cases) {
    const res = await app.json('POST', `/api/v1/hash/${c.path}`, { body: c.body, form: 'bare' })
    expect(res.status).toBe(200)
    produced.push({ algorithm: res.body.algorithm, input: c.body.input as string, hash: res.body.hash })
  }
  const verdicts = (items: typeof produced) => pythonJson<boolean[]>(VERIFY, items)
  expect(verdicts(produced)).toEqual(produced.map(() => true))
  expect(verdicts(produced.map((p) => ({ ...p, input: p.input + '!' })))).toEqual(produced.map(() => false))
})
