// The admin API client. The admin key lives in sessionStorage only (gone
// when the tab closes) and goes out as Authorization: Bearer on each call.

const STORE = 'parley.console.adminKey';
// The admin API is at /admin/v1/ beside /console/, wherever Parley is mounted.
const ROOT = new URL('../admin/v1/', import.meta.url);

export const session = {
  get key() { try { return sessionStorage.getItem(STORE) || ''; } catch { return ''; } },
  set(key) { sessionStorage.setItem(STORE, key); },
  clear() { try { sessionStorage.removeItem(STORE); } catch { /* storage off */ } },
};

/** An error reply of the admin API, or a failure to reach it (status 0). */
export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field || '';
  }
}

let onUnauthorized = null;
/** Sets what happens when a signed-in call answers 401 (the key went away). */
export function whenUnauthorized(fn) { onUnauthorized = fn; }

/**
 * Calls the admin API. opts: method, body (sent as JSON), query (object;
 * empty values left out), accept, key (null: no credentials).
 */
export async function call(path, opts = {}) {
  const url = new URL(path, ROOT);
  for (const [k, v] of Object.entries(opts.query || {})) {
    if (v != null && v !== '') url.searchParams.set(k, Array.isArray(v) ? v.join(',') : String(v));
  }
  const headers = { Accept: opts.accept || 'application/json' };
  const key = opts.key === undefined ? session.key : opts.key;
  if (key) headers.Authorization = `Bearer ${key}`;
  let body;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res;
  try {
    res = await fetch(url, { method: opts.method || 'GET', headers, body, cache: 'no-store', credentials: 'omit', signal: opts.signal });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'unavailable', 'Parley could not be reached. Is the gateway running?');
  }
  if (!res.ok) {
    let detail = {};
    try { detail = (await res.json()).error || {}; } catch { /* not JSON */ }
    const err = new ApiError(res.status, detail.code || `http_${res.status}`,
      detail.message || `${res.status} ${res.statusText}`.trim(), detail.field);
    if (res.status === 401 && key && opts.key === undefined && onUnauthorized) onUnauthorized(err);
    throw err;
  }
  if (opts.raw) return res;
  if (res.status === 204) return null;
  return res.json();
}

const enc = encodeURIComponent;

export const api = {
  info: (key) => call('info', { key }),
  stats: (signal) => call('stats', { signal }),
  usage: (query) => call('usage', { query }),
  /** The usage query as CSV, a Blob. */
  usageCSV: async (query) => (await call('usage', { query, accept: 'text/csv', raw: true })).blob(),
  keys: () => call('keys'),
  createKey: (key) => call('keys', { method: 'POST', body: key }),
  updateKey: (name, patch) => call(`keys/${enc(name)}`, { method: 'PATCH', body: patch }),
  revokeKey: (name) => call(`keys/${enc(name)}`, { method: 'DELETE' }),
  models: () => call('models'),
  /** Sends a try-it prompt: the Response, its body a stream of events. */
  try: (body, signal) => call('try', { method: 'POST', body, accept: 'text/event-stream', raw: true, signal }),
  tasks: (query, signal) => call('tasks', { query, signal }),
};

/** Sums the measures of usage rows. */
export function totals(rows) {
  const t = { requests: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, reasoning_tokens: 0, cost_usd: 0, duration_ms: 0 };
  for (const r of rows || []) for (const k of Object.keys(t)) t[k] += Number(r[k]) || 0;
  return t;
}
