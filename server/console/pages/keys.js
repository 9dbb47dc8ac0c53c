// Keys: the managed keys with their limits, budgets and what they have used
// in the budget's period; create (the secret shown once), edit, revoke.

import { api, ApiError } from '../api.js';
import { h, fill, fmt, pageHead, loading, errorBox, notice, table, timeEl, modal, nextId, announce, toDate } from '../ui.js';
import { meter } from '../chart.js';

const PERIOD_WORDS = { day: 'today', week: 'this week', month: 'this month' };

export function render(view, ctx) {
  let stopped = false;
  const body = h('div', { class: 'stack' }, loading('Loading keys…'));
  const canManage = ctx.info?.managed_keys !== false;
  const create = h('button', { type: 'button', class: 'btn btn-primary', onclick: () => openForm() }, h('span', { 'aria-hidden': 'true' }, '+ '), 'Create key');
  fill(view,
    pageHead('Keys', 'Client keys made here: what each may use, its limits, and what it has spent against its budget.', canManage ? create : null),
    canManage ? body : notice(h('strong', null, 'Managed keys are not available. '), 'This gateway keeps no store for them; keys can only be listed in the configuration file.'));
  if (!canManage) return null;

  async function load(highlight) {
    fill(body, loading('Loading keys…'));
    let keys;
    let usage = null;
    try {
      const [k, u] = await Promise.all([api.keys(), spend(ctx).catch(() => null)]);
      keys = k.data || [];
      usage = u;
    } catch (e) {
      if (!stopped) fill(body, errorBox(e, () => load()));
      return;
    }
    if (stopped) return;
    fill(body, keysTable(keys, usage, { edit: openForm, revoke, highlight }));
  }

  async function openForm(existing) {
    const saved = await modal((close) => keyForm(close, existing), { label: existing ? `Edit key ${existing.name}` : 'Create a key', className: 'dialog-wide' });
    if (!saved) return;
    if (!existing && saved.key) await showSecret(saved);
    announce(existing ? `Key ${saved.name} saved` : `Key ${saved.name} created`);
    await load(saved.name);
  }

  async function revoke(key) {
    const ok = await modal((close) => confirmRevoke(close, key), { label: `Revoke key ${key.name}` });
    if (!ok) return;
    announce(`Key ${key.name} revoked`);
    await load(key.name);
  }

  load();
  return () => { stopped = true; };
}

/** What each key spent in the current day, week and month (UTC), by key. */
async function spend(ctx) {
  if (ctx.info?.ledger === false) return null;
  const now = new Date();
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const week = new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86400e3);
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const starts = { day, week, month };
  const out = {};
  await Promise.all(Object.entries(starts).map(async ([per, from]) => {
    const res = await api.usage({ from: from.toISOString(), to: now.toISOString(), group_by: 'key' });
    out[per] = new Map((res.data || []).map((r) => [r.key, { usd: r.cost_usd, tokens: r.input_tokens + r.output_tokens, requests: r.requests }]));
  }));
  return out;
}

function keysTable(keys, usage, { edit, revoke, highlight }) {
  if (!keys.length) {
    return h('div', { class: 'card empty-card' },
      h('p', null, h('strong', null, 'No managed keys yet.')),
      h('p', { class: 'muted' }, 'Create a key for each client, team or service, with the models it may use and the limits it runs under.'));
  }
  const now = Date.now();
  const live = keys.filter((k) => !k.revoked_at).sort((a, b) => a.name.localeCompare(b.name));
  const gone = keys.filter((k) => k.revoked_at).sort((a, b) => String(b.revoked_at).localeCompare(String(a.revoked_at)));
  const month = (k) => usage?.month?.get(k.name);
  return h('div', { class: 'card card-table' }, table({
    caption: 'Managed keys',
    rows: [...live, ...gone],
    rowProps: (k) => ({ class: [k.revoked_at ? 'revoked' : '', k.name === highlight ? 'flash' : ''].join(' ').trim() || null, dataset: { key: k.name } }),
    columns: [
      {
        label: 'Key', cell: (k) => [
          h('a', { href: `#/usage?key=${encodeURIComponent(k.name)}&group_by=model,day`, class: 'key-name', title: `Usage of ${k.name}` }, k.name),
          k.hint ? h('span', { class: 'hint mono' }, k.hint) : null,
          meta(k.metadata),
        ],
      },
      { label: 'Status', cell: (k) => status(k, now) },
      {
        label: 'Models', cell: (k) => (k.models?.length
          ? h('span', { class: 'chips' }, k.models.map((m) => h('code', { class: 'chip' }, m)))
          : h('span', { class: 'muted' }, 'All models')),
      },
      { label: 'Limits', cell: (k) => limitsText(k.limits) },
      { label: 'Budget', cell: (k) => budgetCell(k, usage) },
      {
        label: 'Spent this month', num: true, cell: (k) => (usage ? [
          h('span', { class: 'cell-main' }, fmt.usd(month(k)?.usd ?? 0)),
          h('span', { class: 'cell-sub' }, `${fmt.compact(month(k)?.tokens ?? 0)} tokens · ${fmt.compact(month(k)?.requests ?? 0)} req`),
        ] : h('span', { class: 'muted' }, '—')),
      },
      { label: 'Created', cell: (k) => timeEl(k.created_at, fmt.date) },
      {
        label: h('span', { class: 'sr-only' }, 'Actions'), cls: 'actions', cell: (k) => (k.revoked_at ? null : [
          h('button', { type: 'button', class: 'btn btn-sm', 'aria-label': `Edit ${k.name}`, onclick: () => edit(k) }, 'Edit'),
          h('button', { type: 'button', class: 'btn btn-sm btn-danger-ghost', 'aria-label': `Revoke ${k.name}`, onclick: () => revoke(k) }, 'Revoke'),
        ]),
      },
    ],
  }));
}

function meta(m) {
  if (!m) return null;
  const parts = ['team', 'owner'].filter((k) => m[k]).map((k) => `${k} ${m[k]}`);
  const others = Object.keys(m).filter((k) => k !== 'team' && k !== 'owner').length;
  if (others) parts.push(`+${others} more`);
  return parts.length ? h('span', { class: 'cell-sub' }, parts.join(' · ')) : null;
}

function status(k, now) {
  if (k.revoked_at) return h('span', { class: 'status status-revoked' }, 'Revoked ', timeEl(k.revoked_at));
  const exp = toDate(k.expires_at);
  if (exp && exp.getTime() <= now) return h('span', { class: 'status status-expired' }, 'Expired ', timeEl(exp));
  if (exp) return h('span', { class: 'status status-active' }, 'Active', h('span', { class: 'cell-sub' }, 'until ', timeEl(exp)));
  return h('span', { class: 'status status-active' }, 'Active');
}

function limitsText(l) {
  const parts = [];
  if (l?.requests_per_minute) parts.push(`${fmt.int(l.requests_per_minute)} req/min`);
  if (l?.tokens_per_minute) parts.push(`${fmt.compact(l.tokens_per_minute)} tokens/min`);
  if (l?.concurrent_requests) parts.push(`${fmt.int(l.concurrent_requests)} at once`);
  if (!parts.length) return h('span', { class: 'muted' }, 'None');
  return h('ul', { class: 'plain' }, parts.map((p) => h('li', null, p)));
}

function budgetCell(k, usage) {
  const b = k.limits?.budget;
  if (!b) return h('span', { class: 'muted' }, 'None');
  const per = b.per || 'month';
  const used = usage?.[per]?.get(k.name);
  const words = PERIOD_WORDS[per] || `per ${per}`;
  if (b.usd != null) {
    if (!usage) return `${fmt.usd(b.usd)} per ${per}`;
    return meter(used?.usd ?? 0, b.usd, `${fmt.usd(used?.usd ?? 0)} of ${fmt.usd(b.usd)} ${words}`);
  }
  if (!usage) return `${fmt.compact(b.tokens)} tokens per ${per}`;
  return meter(used?.tokens ?? 0, b.tokens, `${fmt.compact(used?.tokens ?? 0)} of ${fmt.compact(b.tokens)} tokens ${words}`);
}

// The form ------------------------------------------------------------------------

/** A datetime-local value for an API time, in local time. */
function localInput(v) {
  const d = toDate(v);
  if (!d) return '';
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

// The form's fields by the name the server gives a bad one.
const FIELD_OF = {
  name: 'name', models: 'models', expires_at: 'expires_at', metadata: 'team',
  'limits.requests_per_minute': 'rpm', 'limits.tokens_per_minute': 'tpm', 'limits.concurrent_requests': 'concurrent',
  limits: 'rpm', 'limits.budget': 'budget', 'limits.budget.usd': 'budget', 'limits.budget.tokens': 'budget',
  'limits.budget.per': 'per', 'metadata.team': 'team', 'metadata.owner': 'owner',
};

function keyForm(close, existing) {
  const editing = !!existing;
  const l = existing?.limits || {};
  const b = l.budget || {};
  const fields = {};
  const titleId = nextId('form-title');
  const summary = h('div', { class: 'form-alert', role: 'alert', hidden: true });

  function field(key, label, input, help) {
    const id = nextId(key);
    input.id = id;
    input.name = key;
    const helpEl = help ? h('p', { class: 'help', id: `${id}-help` }, help) : null;
    const err = h('p', { class: 'field-error', id: `${id}-err` });
    input.setAttribute('aria-describedby', [help ? `${id}-help` : '', `${id}-err`].join(' ').trim());
    const el = h('div', { class: 'field', dataset: { field: key } }, h('label', { for: id }, label), input, helpEl, err);
    fields[key] = { el, input, err };
    return el;
  }
  const text = (value, extra) => h('input', { type: 'text', value: value ?? '', autocomplete: 'off', spellcheck: 'false', ...extra });
  const number = (value, extra) => h('input', { type: 'number', inputmode: 'numeric', step: '1', value: value ?? '', ...extra });
  const select = (value, options) => h('select', null, options.map(([v, t]) => h('option', { value: v, selected: v === value }, t)));

  const nameInput = text(existing?.name, { required: true, maxlength: '64', readonly: editing, autocapitalize: 'off' });
  const form = h('form', { class: 'form', novalidate: true, 'aria-labelledby': titleId },
    h('h2', { id: titleId, class: 'dialog-title' }, editing ? ['Edit key ', h('span', { class: 'mono' }, existing.name)] : 'Create a key'),
    summary,
    field('name', 'Name', nameInput, editing ? 'A key’s name cannot be changed.' : 'Letters, digits, “.”, “_” and “-”; it names the key in the ledger and in logs.'),
    field('models', 'Models', text((existing?.models || []).join(', '), { placeholder: 'e.g. claude-*, gpt-4o' }), 'Model names or globs, separated by commas. Empty allows every model.'),
    h('fieldset', { class: 'fieldset' },
      h('legend', null, 'Limits'),
      h('p', { class: 'help' }, 'Leave a limit empty for none.'),
      h('div', { class: 'grid-fields' },
        field('rpm', 'Requests per minute', number(l.requests_per_minute)),
        field('tpm', 'Tokens per minute', number(l.tokens_per_minute)),
        field('concurrent', 'Concurrent requests', number(l.concurrent_requests)))),
    h('fieldset', { class: 'fieldset' },
      h('legend', null, 'Budget'),
      h('p', { class: 'help' }, 'What the key may spend per calendar period (UTC); requests beyond it are refused.'),
      h('div', { class: 'grid-fields' },
        field('budget', 'Amount', number(b.usd ?? b.tokens, { step: 'any', inputmode: 'decimal' })),
        field('unit', 'Counted in', select(b.tokens != null ? 'tokens' : 'usd', [['usd', 'US dollars'], ['tokens', 'Tokens']])),
        field('per', 'Per', select(b.per || 'month', [['day', 'Day'], ['week', 'Week (from Monday)'], ['month', 'Month']])))),
    h('div', { class: 'grid-fields grid-fields-meta' },
      field('expires_at', 'Expires', h('input', { type: 'datetime-local', value: localInput(existing?.expires_at) }), 'Local time. Empty: never.'),
      field('team', 'Team', text(existing?.metadata?.team)),
      field('owner', 'Owner', text(existing?.metadata?.owner))),
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'btn', onclick: () => close(undefined) }, 'Cancel'),
      h('button', { type: 'submit', class: 'btn btn-primary' }, editing ? 'Save changes' : 'Create key')));

  function clearErrors() {
    summary.hidden = true;
    fill(summary);
    for (const f of Object.values(fields)) {
      f.err.textContent = '';
      f.input.removeAttribute('aria-invalid');
      f.el.classList.remove('invalid');
    }
  }
  function showError(field, message) {
    let key = FIELD_OF[field];
    const base = String(field || '').replace(/\[\d+\]$|\.\d+$/, '');
    if (!key && FIELD_OF[base]) key = FIELD_OF[base];
    if (!key && fields[field]) key = field;
    const f = key && fields[key];
    if (!f) {
      fill(summary, h('strong', null, field ? `${field}: ` : ''), message);
      summary.hidden = false;
      summary.focus?.();
      return;
    }
    f.err.textContent = message;
    f.input.setAttribute('aria-invalid', 'true');
    f.el.classList.add('invalid');
    f.input.focus();
  }
  class Local extends Error { constructor(field, msg) { super(msg); this.field = field; } }
  const num = (key) => {
    const inp = fields[key].input;
    if (inp.validity.badInput) throw new Local(key, 'Enter a number.');
    const v = inp.value.trim();
    return v === '' ? undefined : Number(v);
  };

  function values() {
    const models = fields.models.input.value.split(/[\s,]+/).filter(Boolean);
    const limits = {};
    const rpm = num('rpm'); const tpm = num('tpm'); const conc = num('concurrent'); const amount = num('budget');
    if (rpm !== undefined) limits.requests_per_minute = rpm;
    if (tpm !== undefined) limits.tokens_per_minute = tpm;
    if (conc !== undefined) limits.concurrent_requests = conc;
    if (amount !== undefined) limits.budget = { [fields.unit.input.value]: amount, per: fields.per.input.value };
    const exp = fields.expires_at.input.value;
    if (fields.expires_at.input.validity.badInput) throw new Local('expires_at', 'Enter a date and time.');
    const metadata = { ...(existing?.metadata || {}) };
    for (const k of ['team', 'owner']) {
      const v = fields[k].input.value.trim();
      if (v) metadata[k] = v; else delete metadata[k];
    }
    return {
      models: models.length ? models : null,
      limits: Object.keys(limits).length ? limits : null,
      expires_at: exp ? new Date(exp).toISOString() : null,
      metadata: Object.keys(metadata).length ? metadata : null,
    };
  }
  const same = (a, b2) => JSON.stringify(a ?? null) === JSON.stringify(b2 ?? null);
  const canon = (o) => (o && typeof o === 'object' && !Array.isArray(o)
    ? Object.fromEntries(Object.keys(o).sort().map((k) => [k, canon(o[k])])) : o);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors();
    const submit = form.querySelector('[type=submit]');
    let v;
    try {
      v = values();
    } catch (err) {
      if (err instanceof Local) { showError(err.field, err.message); return; }
      throw err;
    }
    submit.disabled = true;
    try {
      let saved;
      if (editing) {
        const patch = {};
        for (const k of ['models', 'limits', 'expires_at', 'metadata']) {
          const before = k === 'expires_at' ? (existing[k] ? new Date(existing[k]).toISOString() : null) : existing[k];
          if (!same(canon(v[k]), canon(before))) patch[k] = v[k];
        }
        if (!Object.keys(patch).length) { close(existing); return; }
        saved = await api.updateKey(existing.name, patch);
      } else {
        const body = { name: fields.name.input.value.trim() };
        for (const [k, val] of Object.entries(v)) if (val != null) body[k] = val;
        saved = await api.createKey(body);
      }
      close(saved);
    } catch (err) {
      if (err instanceof ApiError && err.status !== 401) showError(err.field, err.message);
      else if (!(err instanceof ApiError)) showError('', err.message);
    } finally {
      submit.disabled = false;
    }
  });
  summary.tabIndex = -1;
  (editing ? fields.models.input : nameInput).setAttribute('autofocus', '');
  return form;
}

function showSecret(key) {
  return modal((close) => {
    const titleId = nextId('secret-title');
    const input = h('input', { type: 'text', readonly: true, value: key.key, class: 'mono secret-value', 'aria-label': `Secret of key ${key.name}`, spellcheck: 'false', onfocus: (e) => e.target.select() });
    const status = h('span', { class: 'copy-status', role: 'status' });
    const copy = h('button', {
      type: 'button', class: 'btn btn-primary', 'data-action': 'copy',
      onclick: async () => {
        try {
          await navigator.clipboard.writeText(key.key);
        } catch {
          input.select();
          document.execCommand('copy');
        }
        status.textContent = 'Copied to the clipboard.';
      },
    }, 'Copy');
    return h('div', { class: 'form', role: 'document', 'aria-labelledby': titleId },
      h('h2', { id: titleId, class: 'dialog-title' }, 'Key ', h('span', { class: 'mono' }, key.name), ' created'),
      h('p', null, 'Give this secret to the client that will use the key. It sends it as its API key.'),
      h('div', { class: 'secret' }, input, copy),
      status,
      h('p', { class: 'notice notice-warn' }, h('strong', null, 'Copy it now: you will not see it again. '), 'Parley does not show a key’s secret after this. If it is lost, revoke the key and create another.'),
      h('div', { class: 'dialog-actions' },
        h('button', { type: 'button', class: 'btn', autofocus: true, onclick: () => close(true) }, 'I have copied it')));
  }, { label: `Key ${key.name} created` });
}

function confirmRevoke(close, key) {
  const titleId = nextId('revoke-title');
  const err = h('p', { class: 'field-error', role: 'alert' });
  const go = h('button', {
    type: 'button', class: 'btn btn-danger',
    onclick: async () => {
      go.disabled = true;
      err.textContent = '';
      try {
        await api.revokeKey(key.name);
        close(true);
      } catch (e) {
        err.textContent = e.message;
        go.disabled = false;
      }
    },
  }, 'Revoke key');
  return h('div', { class: 'form', 'aria-labelledby': titleId },
    h('h2', { id: titleId, class: 'dialog-title' }, 'Revoke key ', h('span', { class: 'mono' }, key.name), '?'),
    h('p', null, 'Requests with this key are refused from now on, on every replica within seconds. A revoked key cannot be restored; its usage stays in the ledger.'),
    err,
    h('div', { class: 'dialog-actions' },
      h('button', { type: 'button', class: 'btn', autofocus: true, onclick: () => close(false) }, 'Cancel'),
      go));
}
