/**
 * CPython as an independent oracle: runs a script with a JSON value on stdin and returns the JSON it
 * prints. Debian's python3 (with python3-bcrypt and python3-argon2 for the hash tests) is a test
 * requirement that `.ci/run` installs; without it these tests fail saying so, rather than being skipped.
 */
export const PYTHON = '/usr/bin/python3'

export function pythonJson<T>(script: string, input: unknown): T {
  const run = Bun.spawnSync([PYTHON, '-c', script], { stdin: Buffer.from(JSON.stringify(input)) })
  if (run.exitCode !== 0)
    throw new Error(
      `${PYTHON} failed (exit ${run.exitCode}; apt-get install python3 python3-bcrypt python3-argon2): ${run.stderr.toString()}`,
    )
  return JSON.parse(run.stdout.toString()) as T
}
