/**
 * The operator console: signs in with an operator token kept in this tab's sessionStorage (never a
 * cookie), and drives the operator API at /admin/v1 with it. Everything the server answers is put in the
 * page through DOM calls and textContent, never parsed as markup.
 */
import { horizontalBars, line, stackedBars } from './charts.js'

const API = '/admin/v1'
const TOKEN = 'almanac.console.token'
const LIVE_EVERY_MS = 5000
/** Series drawn apart in a chart; the rest are summed as "others". */
const SERIES = 6

const $ = (selector, root = document) => root.querySelector(selector)
const $$ = (selector, root = document) => [...root.querySelectorAll(selector)]

/** An element with attributes (`on…` functions become listeners) and children (strings become text nodes). */
function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attributes)) {
    if (v === undefined || v === null || v === false) continue
    if (k.startsWith('on')) node.addEventListener(k.slice(2), v)
    else if (k === 'class') node.className = v
    else node.setAttribute(k, v === true ? '' : String(v))
  }
  node.append(...children.filter((c) => c !== undefined && c !== null).map((c) => (typeof c === 'number' ? String(c) : c)))
  return node
}

// ---------------------------------------------------------------------------------------------------------
// The operator API

class ApiError extends Error {
  constructor(status, problem) {
    const title = typeof problem?.title === 'string' ? problem.title : `HTTP ${status}`
    const detail = typeof problem?.detail === 'string' ? problem.detail : ''
    super(detail ? `${title}: ${detail}` : title)
    this.status = status
  }
}

/** A call to the operator API with `token` (the signed-in one by default): its JSON, or its text for `text`. */
async function api(path, { method = 'GET', body, text = false, token = sessionStorage.getItem(TOKEN) } = {}) {
  const headers = { authorization: `Bearer ${token ?? ''}`, 'x-response-form': 'bare', accept: text ? 'text/plain' : 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const init = { method, headers, credentials: 'omit', cache: 'no-store', redirect: 'error' }
  if (body !== undefined) init.body = JSON.stringify(body)
  let response
  try {
    response = await fetch(API + path, init)
  } catch {
    throw new ApiError(0, { title: 'The server could not be reached' })
  }
  const raw = await response.text()
  if (response.ok) return text ? raw : raw ? JSON.parse(raw) : null
  let problem = {}
  try {
    const parsed = JSON.parse(raw)
    problem = parsed?.error ?? parsed
  } catch {}
  const error = new ApiError(response.status, problem)
  if (response.status === 401 && token === sessionStorage.getItem(TOKEN) && token) signOut(`Signed out: ${error.message}`)
  throw error
}

// ---------------------------------------------------------------------------------------------------------
// Messages

const notice = $('#notice')
const failure = $('#failure')

function notify(text) {
  failure.hidden = true
  notice.textContent = text
  notice.hidden = false
}

function fail(error) {
  notice.hidden = true
  failure.textContent = error instanceof Error ? error.message : String(error)
  failure.hidden = false
}

/** Calls under way: while any is, the page is `aria-busy` (assistive technology, and tests, wait for it to settle). */
let busy = 0

/** Runs `work`, showing its failure; the button that started it is disabled meanwhile. */
async function attempt(button, work) {
  if (button) button.disabled = true
  if (busy++ === 0) document.body.setAttribute('aria-busy', 'true')
  try {
    return await work()
  } catch (error) {
    fail(error)
  } finally {
    if (button) button.disabled = false
    if (--busy === 0) document.body.removeAttribute('aria-busy')
  }
}

const dialog = $('#confirm')

/** A modal confirmation; with `grace`, it asks for a number of seconds too. Resolves to null (cancel) or `{ grace }`. */
function confirmAction({ title, text, ok, grace = false }) {
  $('#confirm-title').textContent = title
  $('#confirm-text').textContent = text
  $('#confirm-ok').textContent = ok
  $('#confirm-grace').hidden = !grace
  dialog.showModal()
  return new Promise((resolve) => {
    const done = (answer) => {
      $('#confirm-ok').removeEventListener('click', yes)
      $('#confirm-cancel').removeEventListener('click', no)
      dialog.removeEventListener('cancel', no)
      dialog.close()
      resolve(answer)
    }
    const yes = () => done({ grace: Number($('#confirm-grace-input').value) || 0 })
    const no = () => done(null)
    $('#confirm-ok').addEventListener('click', yes)
    $('#confirm-cancel').addEventListener('click', no)
    dialog.addEventListener('cancel', no)
  })
}

// ---------------------------------------------------------------------------------------------------------
// State shared by the sections

const state = { plans: [], defaultPlan: '', keys: [], customers: [] }

const customerName = (id) => state.customers.find((c) => c.id === id)?.name ?? id
const dateOf = (iso) => (iso ? iso.slice(0, 10) : '')
const timeOf = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '')

/** Options for a plan choice: the server's default first (value ''), then every plan. */
function planOptions(select, current = null) {
  const described = (p) => `${p.name} (${p.credits} credits / ${p.calendar ? 'calendar month' : `${p.window_seconds} s`})`
  select.replaceChildren(
    h('option', { value: '', selected: current === null }, `Server default (${state.defaultPlan})`),
    ...state.plans.map((p) => h('option', { value: p.name, selected: current === p.name }, described(p))),
  )
}

function customerOptions(select) {
  const chosen = select.value
  select.replaceChildren(
    h('option', { value: '' }, 'None'),
    ...state.customers.map((c) => h('option', { value: c.id }, `${c.name} (${c.id})`)),
  )
  select.value = chosen
}

function fillChoices() {
  for (const select of $$('select[data-plans]')) planOptions(select, select.value || null)
  for (const select of $$('select[data-customers]')) customerOptions(select)
}

async function loadShared() {
  const [plans, customers] = await Promise.all([api('/plans'), api('/customers')])
  state.plans = plans.plans
  state.defaultPlan = plans.default_plan
  state.customers = customers.customers
  fillChoices()
}

// ---------------------------------------------------------------------------------------------------------
// Keys

function keyState(k) {
  if (k.revoked) return h('span', { class: 'badge bad' }, `revoked ${dateOf(k.revoked)}`)
  if (k.expires && Date.parse(k.expires) <= Date.now()) return h('span', { class: 'badge bad' }, 'expired')
  return h('span', { class: 'badge good' }, k.rotated ? `active, rotated ${dateOf(k.rotated)}` : 'active')
}

function keyActions(k) {
  if (k.revoked) return h('td', {}, '')
  const { select, change } = planChanger('Key', k, `/keys/${encodeURIComponent(k.id)}`, loadKeys, {
    select: 'plan-choice',
    button: 'change-plan',
  })
  const rotate = h('button', { type: 'button', class: 'rotate' }, 'Rotate')
  rotate.addEventListener('click', () => rotateKey(k, rotate))
  const revoke = h('button', { type: 'button', class: 'revoke danger' }, 'Revoke')
  revoke.addEventListener('click', () => revokeKey(k, revoke))
  return h('td', { class: 'actions' }, select, change, rotate, revoke)
}

async function rotateKey(k, button) {
  const answer = await confirmAction({
    title: `Rotate key ${k.name}`,
    text: 'A new secret is issued and shown once. The current secret keeps working for the grace period, then is refused.',
    ok: 'Rotate',
    grace: true,
  })
  if (!answer) return
  await attempt(button, async () => {
    const rotated = await api(`/keys/${encodeURIComponent(k.id)}/rotate`, { method: 'POST', body: { grace_seconds: answer.grace } })
    showSecret(rotated.key, rotated.record, `The previous secret works until ${timeOf(rotated.previous_until)}.`)
    await loadKeys()
  })
}

async function revokeKey(k, button) {
  const answer = await confirmAction({
    title: `Revoke key ${k.name}`,
    text: `Key ${k.id} will be refused from now on. This cannot be undone.`,
    ok: 'Revoke',
  })
  if (!answer) return
  await attempt(button, async () => {
    await api(`/keys/${encodeURIComponent(k.id)}/revoke`, { method: 'POST' })
    notify(`Key ${k.name} (${k.id}) is revoked.`)
    await loadKeys()
  })
}

function renderKeys() {
  const rows = [...state.keys].sort((a, b) => (a.created < b.created ? 1 : -1))
  const plan = (k) => (k.customer ? `${k.plan ?? 'default'} (customer's plan applies)` : (k.plan ?? `default (${state.defaultPlan})`))
  $('#keys-table tbody').replaceChildren(
    ...rows.map((k) =>
      h(
        'tr',
        { 'data-id': k.id },
        h('td', {}, h('code', {}, k.id)),
        h('td', { class: 'name' }, k.name),
        h('td', { class: 'plan' }, plan(k)),
        h('td', {}, k.customer ? customerName(k.customer) : '—'),
        h('td', {}, k.scopes ? k.scopes.join(', ') : 'all'),
        h('td', {}, k.expires ? timeOf(k.expires) : 'never'),
        h('td', {}, dateOf(k.created)),
        h('td', { class: 'state' }, keyState(k)),
        keyActions(k),
      ),
    ),
  )
  if (!rows.length) $('#keys-table tbody').append(h('tr', {}, h('td', { colspan: 9, class: 'muted' }, 'No keys yet.')))
}

async function loadKeys() {
  state.keys = (await api('/keys')).keys
  renderKeys()
}

function showSecret(secret, record, extra = '') {
  $('#secret-value').value = secret
  $('#secret-for').textContent = `Key ${record.name} (${record.id}). ${extra}`
  $('#secret').hidden = false
  $('#secret-value').focus()
  $('#secret-value').select()
}

async function copySecret() {
  const input = $('#secret-value')
  try {
    await navigator.clipboard.writeText(input.value)
  } catch {
    // No clipboard API outside a secure context (plain http to another host): copy the selection.
    input.select()
    document.execCommand('copy')
  }
  notify('The secret is copied to the clipboard.')
}

function hideSecret() {
  $('#secret-value').value = ''
  $('#secret').hidden = true
}

async function createKey(event) {
  event.preventDefault()
  const form = event.currentTarget
  const data = new FormData(form)
  const body = { name: String(data.get('name')).trim() }
  if (data.get('plan')) body.plan = data.get('plan')
  if (data.get('customer')) body.customer = data.get('customer')
  const scopes = String(data.get('scopes') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (scopes.length) body.scopes = scopes
  if (data.get('expires')) body.expires = `${data.get('expires')}T00:00:00Z`
  await attempt($('button[type=submit]', form), async () => {
    const created = await api('/keys', { method: 'POST', body })
    showSecret(created.key, created.record)
    notify(`Key ${created.record.name} (${created.record.id}) is created.`)
    form.reset()
    fillChoices()
    await loadKeys()
  })
}

// ---------------------------------------------------------------------------------------------------------
// Customers

/** A plan choice and its button for a key or a customer: PATCHes `path` with the plan chosen, then reloads the list. */
function planChanger(what, record, path, reload, classes = {}) {
  const select = h('select', {
    'aria-label': `New plan for ${what.toLowerCase()} ${record.name}`,
    ...(classes.select ? { class: classes.select } : {}),
  })
  planOptions(select, record.plan)
  const change = h('button', { type: 'button', ...(classes.button ? { class: classes.button } : {}) }, 'Change plan')
  change.addEventListener('click', () =>
    attempt(change, async () => {
      const plan = select.value || null
      await api(path, { method: 'PATCH', body: { plan } })
      notify(`${what} ${record.name} (${record.id}) is now on plan ${plan ?? `default (${state.defaultPlan})`}.`)
      await reload()
    }),
  )
  return { select, change }
}

function customerRow(c) {
  const { select, change } = planChanger('Customer', c, `/customers/${encodeURIComponent(c.id)}`, loadCustomers)
  const keys = state.keys.filter((k) => k.customer === c.id && !k.revoked).length
  return h(
    'tr',
    { 'data-id': c.id },
    h('td', {}, h('code', {}, c.id)),
    h('td', { class: 'name' }, c.name),
    h('td', { class: 'plan' }, c.plan ?? `default (${state.defaultPlan})`),
    h('td', {}, dateOf(c.created)),
    h('td', { class: 'num' }, keys),
    h('td', { class: 'actions' }, select, change),
  )
}

async function loadCustomers() {
  const [customers, keys] = await Promise.all([api('/customers'), api('/keys')])
  state.customers = customers.customers
  state.keys = keys.keys
  fillChoices()
  $('#customers-table tbody').replaceChildren(...state.customers.map(customerRow))
  if (!state.customers.length) $('#customers-table tbody').append(h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No customers yet.')))
}

async function createCustomer(event) {
  event.preventDefault()
  const form = event.currentTarget
  const data = new FormData(form)
  const body = { name: String(data.get('name')).trim() }
  if (data.get('plan')) body.plan = data.get('plan')
  await attempt($('button[type=submit]', form), async () => {
    const created = await api('/customers', { method: 'POST', body })
    notify(`Customer ${created.name} (${created.id}) is created.`)
    form.reset()
    await loadCustomers()
  })
}

// ---------------------------------------------------------------------------------------------------------
// Usage

const HOUR = 3600_000
const DAY = 24 * HOUR
const hourText = (ms) => `${new Date(ms).toISOString().slice(0, 13)}:00Z`
const dayText = (ms) => new Date(ms).toISOString().slice(0, 10)

/** The periods of the last `count` hours or days, oldest first, as the API writes them. */
function periodsBack(count, by) {
  const step = by === 'hour' ? HOUR : DAY
  const now = Math.floor(Date.now() / step) * step
  return Array.from({ length: count }, (_, i) => now - (count - 1 - i) * step).map(by === 'hour' ? hourText : dayText)
}

/** A caller's name: the key's, when the caller is a key of the store (`key:<id>` or its id). */
function callerName(caller) {
  const id = caller.startsWith('key:') ? caller.slice(4) : caller
  return state.keys.find((k) => k.id === id)?.name ?? caller
}

/** Requests per period of each group (`by`: a row's field), the largest `SERIES` apart and the rest as "others". */
function seriesOf(rows, periods, by, label) {
  const index = new Map(periods.map((p, i) => [p, i]))
  const groups = new Map()
  for (const r of rows) {
    const i = index.get(r.period)
    if (i === undefined) continue
    const name = r[by] || '(none)'
    if (!groups.has(name)) groups.set(name, Array(periods.length).fill(0))
    groups.get(name)[i] += r.requests
  }
  const total = (values) => values.reduce((a, b) => a + b, 0)
  const sorted = [...groups].sort((a, b) => total(b[1]) - total(a[1]))
  const series = sorted.slice(0, SERIES).map(([name, values]) => ({ name: label(name), values }))
  const rest = sorted.slice(SERIES)
  if (rest.length) series.push({ name: `${rest.length} others`, values: periods.map((_, i) => rest.reduce((s, [, v]) => s + v[i], 0)) })
  return series
}

/** Per caller over `rows`: requests, credits, refusals, errors and bytes; most credits first. */
function callers(rows) {
  const by = new Map()
  for (const r of rows) {
    const c = by.get(r.key) ?? { key: r.key, customer: r.customer, requests: 0, credits: 0, refused: 0, errors: 0, bytes: 0 }
    c.requests += r.requests
    c.credits += r.credits
    c.refused += r.refused
    c.errors += r.client_errors + r.server_errors
    c.bytes += r.bytes
    by.set(r.key, c)
  }
  return [...by.values()].sort((a, b) => b.credits - a.credits || b.requests - a.requests)
}

const outcomeColour = (o) => (o.startsWith('2') ? 2 : o.startsWith('429') ? 5 : o.startsWith('5') ? 3 : 1)

function renderCallers(list) {
  $('#callers-table tbody').replaceChildren(
    ...list.map((c) =>
      h(
        'tr',
        { 'data-caller': c.key },
        h('td', {}, h('code', {}, c.key)),
        h('td', { class: 'name' }, callerName(c.key)),
        h('td', {}, c.customer ? customerName(c.customer) : '—'),
        h('td', { class: 'num requests' }, c.requests),
        h('td', { class: 'num credits' }, c.credits),
        h('td', { class: 'num' }, c.refused),
        h('td', { class: 'num' }, c.errors),
        h('td', { class: 'num' }, c.bytes),
      ),
    ),
  )
  if (!list.length) $('#callers-table tbody').append(h('tr', {}, h('td', { colspan: 8, class: 'muted' }, 'No usage recorded.')))
}

async function loadUsage() {
  const [day, month, keys] = await Promise.all([api('/usage?by=hour&since=24h'), api('/usage?by=day&since=30d'), api('/keys')])
  state.keys = keys.keys
  const hours = periodsBack(24, 'hour')
  const days = periodsBack(31, 'day')
  const hourLabels = hours.map((p) => p.slice(11, 16))
  const dayLabels = days.map((p) => p.slice(5))
  stackedBars($('#chart-day-key'), { periods: hours, labels: hourLabels, series: seriesOf(day.rows, hours, 'key', callerName) })
  stackedBars($('#chart-day-domain'), { periods: hours, labels: hourLabels, series: seriesOf(day.rows, hours, 'domain', String) })
  stackedBars($('#chart-month-key'), { periods: days, labels: dayLabels, series: seriesOf(month.rows, days, 'key', callerName) })
  stackedBars($('#chart-month-domain'), { periods: days, labels: dayLabels, series: seriesOf(month.rows, days, 'domain', String) })
  const outcomes = month.outcomes.map((o) => ({ label: o.outcome, value: o.requests, colour: outcomeColour(o.outcome) }))
  horizontalBars($('#chart-outcomes'), outcomes, { empty: 'No requests in the last 30 days.' })
  const list = callers(month.rows)
  const top = list.slice(0, 10).map((c) => ({ label: callerName(c.key), value: c.credits }))
  horizontalBars($('#chart-callers'), top, { unit: 'credits', empty: 'No usage recorded.' })
  renderCallers(list)
  $('#usage-stamp').textContent = `Read at ${new Date().toLocaleTimeString()}. Periods are UTC.`
}

// ---------------------------------------------------------------------------------------------------------
// Datasets and audit

async function loadDatasets() {
  const { datasets } = await api('/datasets')
  const sorted = [...datasets].sort((a, b) => (b.age_days ?? 0) - (a.age_days ?? 0))
  $('#datasets-table tbody').replaceChildren(
    ...sorted.map((d) =>
      h(
        'tr',
        { 'data-id': d.id },
        h('td', {}, h('code', {}, d.id)),
        h('td', {}, d.domain ?? ''),
        h('td', {}, h('span', { class: `badge ${d.status === 'ok' || d.status === 'open' ? 'good' : 'warn'}` }, d.status ?? '')),
        h('td', {}, d.version ?? ''),
        h('td', {}, d.date ?? ''),
        h('td', { class: 'num' }, d.age_days ?? ''),
        h('td', {}, h('span', { class: `badge ${d.stale ? 'bad' : 'good'}` }, d.stale ? 'stale' : 'fresh')),
      ),
    ),
  )
}

const valueText = (v) => (v === null || v === undefined ? '∅' : Array.isArray(v) ? v.join(', ') : String(v))

async function loadAudit() {
  const { entries } = await api('/audit?limit=200')
  $('#audit-table tbody').replaceChildren(
    ...entries.map((e) => {
      const changes = Object.entries(e.changes ?? {}).map(([field, c]) =>
        h('li', {}, `${field}: ${valueText(c?.from)} → ${valueText(c?.to)}`),
      )
      return h(
        'tr',
        {},
        h('td', {}, timeOf(e.at)),
        h('td', {}, e.actor),
        h('td', {}, e.action),
        h('td', {}, h('code', {}, e.target)),
        h('td', {}, h('ul', { class: 'changes' }, ...changes)),
      )
    }),
  )
  if (!entries.length) $('#audit-table tbody').append(h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No changes recorded.')))
}

// ---------------------------------------------------------------------------------------------------------
// Live figures from the Prometheus text

/** Prometheus text exposition: `{ name, labels, value }` per sample line. */
export function parseMetrics(text) {
  const samples = []
  for (const row of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(row)
    if (!m) continue
    const labels = {}
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c))
    samples.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return samples
}

const sumOf = (samples, name, keep = () => true) =>
  samples.filter((s) => s.name === name && keep(s.labels)).reduce((a, s) => a + s.value, 0)
const live = { timer: 0, samples: [], last: null }

function figure(name, value) {
  return [h('dt', {}, name), h('dd', {}, value)]
}

async function sampleLive() {
  const samples = parseMetrics(await api('/metrics', { text: true }))
  const at = Date.now()
  const total = sumOf(samples, 'almanac_http_requests_total')
  const rate = live.last ? Math.max(0, (total - live.last.total) / ((at - live.last.at) / 1000)) : 0
  if (live.last) live.samples = [...live.samples, { at, value: rate }].slice(-60)
  live.last = { at, total }
  const mb = sumOf(samples, 'process_resident_memory_bytes') / 2 ** 20
  $('#live-figures').replaceChildren(
    ...figure('Requests per second', live.samples.length ? rate.toFixed(2) : '…'),
    ...figure('Requests since start', String(total)),
    ...figure('In flight', String(sumOf(samples, 'almanac_http_requests_in_flight'))),
    ...figure('Server errors (5xx)', String(sumOf(samples, 'almanac_http_requests_total', (l) => /^5/.test(l.status ?? '')))),
    ...figure('Quota refusals', String(sumOf(samples, 'almanac_quota_refusals_total'))),
    ...figure('Usage rows pending', String(sumOf(samples, 'almanac_usage_pending_rows'))),
    ...figure('Resident memory', `${mb.toFixed(1)} MiB`),
  )
  line($('#chart-live'), live.samples)
  const routes = samples.filter((s) => s.name === 'almanac_http_requests_total').sort((a, b) => b.value - a.value)
  $('#live-routes tbody').replaceChildren(
    ...routes
      .slice(0, 20)
      .map((s) =>
        h(
          'tr',
          {},
          h('td', {}, s.labels.route ?? ''),
          h('td', {}, s.labels.method ?? ''),
          h('td', {}, s.labels.status ?? ''),
          h('td', { class: 'num' }, s.value),
        ),
      ),
  )
  $('#live-stamp').textContent = `Last read ${new Date(at).toLocaleTimeString()}.`
}

/** Samples every few seconds while the Live tab is shown and the browser tab is visible. */
function steerLive() {
  const wanted = current === 'live' && document.visibilityState === 'visible' && Boolean(sessionStorage.getItem(TOKEN))
  if (wanted && !live.timer) {
    const tick = () => sampleLive().catch(fail)
    tick()
    live.timer = setInterval(tick, LIVE_EVERY_MS)
  } else if (!wanted && live.timer) {
    clearInterval(live.timer)
    live.timer = 0
  }
}

// ---------------------------------------------------------------------------------------------------------
// Tabs, sign-in and sign-out

const LOADERS = {
  keys: loadKeys,
  customers: loadCustomers,
  usage: loadUsage,
  datasets: loadDatasets,
  live: async () => {},
  audit: loadAudit,
}
let current = 'keys'

async function show(tab) {
  current = tab
  notice.hidden = true
  failure.hidden = true
  for (const button of $$('#tabs button')) {
    if (button.dataset.tab === tab) button.setAttribute('aria-current', 'page')
    else button.removeAttribute('aria-current')
  }
  for (const section of $$('.tab')) section.hidden = section.id !== `tab-${tab}`
  steerLive()
  await attempt(null, LOADERS[tab])
}

async function enter(operator) {
  $('#operator').textContent = operator
  $('#who').hidden = false
  $('#sign-in').hidden = true
  $('#app').hidden = false
  await attempt(null, loadShared)
  await show(current)
}

function signIn(event) {
  event.preventDefault()
  const input = $('#token')
  const token = input.value.trim()
  const error = $('#sign-in-error')
  attempt($('#sign-in-form button'), async () => {
    try {
      const { operator } = await api('/whoami', { token })
      sessionStorage.setItem(TOKEN, token)
      input.value = ''
      error.hidden = true
      await enter(operator)
    } catch (e) {
      error.textContent =
        e.status === 401
          ? `This token was refused (401). Check it against ALMANAC_ADMIN_TOKENS. ${e.message}`
          : `Sign-in failed: ${e.message}`
      error.hidden = false
    }
  })
}

/** Forgets the token and everything read with it. */
function signOut(message) {
  sessionStorage.removeItem(TOKEN)
  Object.assign(state, { plans: [], defaultPlan: '', keys: [], customers: [] })
  for (const body of $$('#app tbody, #live-figures')) body.replaceChildren()
  for (const chart of $$('.charts div, #chart-live')) chart.replaceChildren()
  hideSecret()
  live.samples = []
  live.last = null
  steerLive()
  notice.hidden = true
  failure.hidden = true
  $('#operator').textContent = ''
  $('#who').hidden = true
  $('#app').hidden = true
  $('#sign-in').hidden = false
  const error = $('#sign-in-error')
  error.textContent = typeof message === 'string' ? message : ''
  error.hidden = typeof message !== 'string'
  $('#token').focus()
}

function start() {
  $('#sign-in-form').addEventListener('submit', signIn)
  $('#sign-out').addEventListener('click', () => signOut())
  $('#key-create').addEventListener('submit', createKey)
  $('#customer-create').addEventListener('submit', createCustomer)
  $('#secret-copy').addEventListener('click', copySecret)
  $('#secret-hide').addEventListener('click', hideSecret)
  $('#usage-reload').addEventListener('click', (e) => attempt(e.currentTarget, loadUsage))
  $('#datasets-reload').addEventListener('click', (e) => attempt(e.currentTarget, loadDatasets))
  $('#audit-reload').addEventListener('click', (e) => attempt(e.currentTarget, loadAudit))
  for (const button of $$('#tabs button')) button.addEventListener('click', () => show(button.dataset.tab))
  document.addEventListener('visibilitychange', steerLive)
  const token = sessionStorage.getItem(TOKEN)
  if (!token) return signOut()
  api('/whoami').then(
    ({ operator }) => enter(operator),
    (e) => signOut(`Signed out: ${e.message}`),
  )
}

start()
