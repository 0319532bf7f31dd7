/**
 * `almanac customers create | list | update`: customers (accounts) in the key store. A key that belongs to
 * a customer (`almanac keys create|update --customer`) spends the customer's credits on the customer's
 * plan, so all of one customer's keys share one quota. Changes are recorded in the audit log
 * (`almanac keys audit`) as `cli:<OS user>`.
 */
import type { Config } from '../config.ts'
import type { Customer, CustomerChanges } from '../stores/keys.ts'
import { operator, planFlag, printJson, runStoreCommand, table, where, type CommandContext, type StoreCommand } from './keys.ts'

export const CUSTOMERS_USAGE = `usage:
  almanac customers create --name NAME [--plan PLAN] [--json]
      a customer (account); its keys (almanac keys create|update --customer ID|NAME) spend its credits on
      its plan, whatever their own; without --plan it follows ALMANAC_DEFAULT_PLAN
  almanac customers list [--json]
      every customer's id, name, plan, number of active keys and creation time
  almanac customers update <id | name> [--name NAME] [--plan PLAN|default] [--json]
      rename a customer or change its plan; all its keys follow (a running server: at once with sqlite,
      within a second with redis)
Customers live with the keys, in ALMANAC_KEY_STORE (almanac keys --help); plans are ALMANAC_PLANS (--plans).`

const planWords = (customer: Customer, config: Config) => customer.plan ?? `${config.defaultPlan} (default)`

async function create({ config, flags, json, log, store }: CommandContext): Promise<number> {
  const name = flags.get('name')
  if (!name) {
    log(`almanac: customers create needs --name NAME\n${CUSTOMERS_USAGE}`)
    return 2
  }
  const plan = flags.has('plan') ? planFlag(flags.get('plan')!, config, false) : null
  const customer = await store().createCustomer({ name, plan }, operator())
  if (json) printJson(customer)
  else {
    console.log(customer.id)
    log(`created customer ${customer.id} (${customer.name}, plan ${planWords(customer, config)}) in ${where(config)}`)
  }
  return 0
}

async function list({ json, store }: CommandContext): Promise<number> {
  const customers = await store().listCustomers()
  if (json) printJson(customers)
  else if (!customers.length) console.log('no customers')
  else {
    const active = new Map<string, number>()
    for (const key of await store().list()) if (key.customer && !key.revoked) active.set(key.customer, (active.get(key.customer) ?? 0) + 1)
    const rows = customers.map((c) => [c.id, c.name, c.plan ?? '(default)', String(active.get(c.id) ?? 0), c.created])
    console.log(table([['ID', 'NAME', 'PLAN', 'KEYS', 'CREATED'], ...rows]))
  }
  return 0
}

async function update({ config, flags, target, json, log, store }: CommandContext): Promise<number> {
  const changes: CustomerChanges = {}
  if (flags.has('name')) changes.name = flags.get('name')!
  if (flags.has('plan')) changes.plan = planFlag(flags.get('plan')!, config, true)
  if (!Object.keys(changes).length) {
    log(`almanac: customers update: name what to change (--name, --plan)\n${CUSTOMERS_USAGE}`)
    return 2
  }
  const customer = await store().updateCustomer(target, changes, operator())
  if (json) printJson(customer)
  else log(`updated customer ${customer.id} (${customer.name}, plan ${planWords(customer, config)})`)
  return 0
}

const CUSTOMER_COMMANDS: Record<string, StoreCommand> = {
  create: { options: { name: { type: 'string' }, plan: { type: 'string' } }, run: create },
  list: { run: list },
  update: { options: { name: { type: 'string' }, plan: { type: 'string' } }, target: true, run: update },
}

/** Runs the subcommand; returns the process exit code. */
export function customersCommand(
  args: string[],
  env: Record<string, string | undefined> = process.env,
  log: (line: string) => void = (l) => console.error(l),
): Promise<number> {
  return runStoreCommand('customers', CUSTOMERS_USAGE, CUSTOMER_COMMANDS, args, env, log)
}
