// Usage: the ledger filtered and grouped, with totals and a CSV export.

import { api, totals, ApiError } from '../api.js';
import { h, fill, fmt, pageHead, loading, errorBox, notice, table, timeEl, nextId, announce } from '../ui.js';

const DIMENSIONS = [
  ['key', 'Key'], ['model', 'Model'], ['upstream', 'Upstream'], ['dialect', 'Dialect'],
  ['operation', 'Operation'], ['status', 'Status'], ['day', 'Day'], ['hour', 'Hour'],
];
const LABEL = Object.fromEntries(DIMENSIONS);
const FILTERS = ['key', 'model', 'upstream', 'status'];

const iso = (d) => d.toISOString().slice(0, 10);
const nextDay = (day) => iso(new Date(Date.parse(`${day}T00:00:00Z`) + 86400e3));

export function render(view, ctx) {
  let stopped = false;
  if (ctx.info?.ledger === false) {
    fill(view, pageHead('Usage', null), notice(h('strong', null, 'The usage ledger is off. '), 'Parley keeps no record of finished requests (ledger.disabled), so there is no usage to show.'));
    return null;
  }
  const now = new Date();
  const p = ctx.params;
  const state = {
    from: p.get('from') || iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))),
    to: p.get('to') || iso(now),
    group_by: (p.get('group_by') ?? 'model').split(',').filter((g) => LABEL[g]),
  };
  for (const f of FILTERS) state[f] = p.get(f) || '';

  const inputs = {};
  const errs = {};
  const lists = {};
  function field(name, label, input, help) {
    const id = nextId(name);
    input.id = id;
    input.name = name;
    errs[name] = h('p', { class: 'field-error', id: `${id}-err` });
    input.setAttribute('aria-describedby', [help ? `${id}-help` : '', `${id}-err`].join(' ').trim());
    inputs[name] = input;
    return h('div', { class: 'field' }, h('label', { for: id }, label), input, help ? h('p', { class: 'help', id: `${id}-help` }, help) : null, errs[name]);
  }
  const withList = (name, placeholder) => {
    const listId = nextId(`${name}-list`);
    lists[name] = h('datalist', { id: listId });
    return h('input', { type: 'text', value: state[name], list: listId, placeholder, autocomplete: 'off', spellcheck: 'false' });
  };

  const groupId = nextId('group');
  const groupBoxes = DIMENSIONS.map(([d, label]) => {
    const id = `${groupId}-${d}`;
    return h('span', { class: 'check' },
      h('input', { type: 'checkbox', id, name: 'group_by', value: d, checked: state.group_by.includes(d) }),
      h('label', { for: id }, label));
  });
  errs.group_by = h('p', { class: 'field-error', id: `${groupId}-err` });
  const exportBtn = h('button', { type: 'button', class: 'btn', onclick: () => exportCSV() }, 'Export CSV');
  const exportStatus = h('span', { class: 'muted small', role: 'status' });

  const form = h('form', { class: 'card filters', novalidate: true, 'aria-label': 'Usage filters' },
    h('div', { class: 'filter-grid' },
      field('from', 'From', h('input', { type: 'date', value: state.from, required: true })),
      field('to', 'To', h('input', { type: 'date', value: state.to, required: true }), 'UTC days, both included.'),
      field('key', 'Key', withList('key', 'Any key')),
      field('model', 'Model', withList('model', 'Any model')),
      field('upstream', 'Upstream', withList('upstream', 'Any upstream')),
      field('status', 'Status', h('input', { type: 'text', inputmode: 'numeric', value: state.status, placeholder: 'Any, e.g. 429', autocomplete: 'off', maxlength: '3' }))),
    h('fieldset', { class: 'group-by', 'aria-describedby': `${groupId}-err` },
      h('legend', null, 'Group by'),
      h('div', { class: 'checks' }, groupBoxes),
      errs.group_by),
    Object.values(lists),
    h('div', { class: 'form-actions' },
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Apply'),
      exportBtn, exportStatus));

  const results = h('section', { class: 'card', 'aria-labelledby': 'results-title' },
    h('div', { class: 'card-head' }, h('h2', { class: 'card-title', id: 'results-title' }, 'Results'), h('span', { class: 'muted small', id: 'results-note' })),
    h('div', { class: 'results-body' }));

  fill(view, pageHead('Usage', 'Requests, tokens and cost from the ledger, by whichever dimensions you group them.'), form, results);

  function read() {
    state.from = inputs.from.value;
    state.to = inputs.to.value;
    for (const f of FILTERS) state[f] = inputs[f].value.trim();
    state.group_by = groupBoxes.map((b) => b.firstChild).filter((c) => c.checked).map((c) => c.value);
  }
  function query() {
    const q = { from: state.from, to: state.to ? nextDay(state.to) : '', group_by: state.group_by.join(',') };
    for (const f of FILTERS) q[f] = state[f];
    return q;
  }
  function remember() {
    const sp = new URLSearchParams();
    for (const k of ['from', 'to', ...FILTERS]) if (state[k]) sp.set(k, state[k]);
    sp.set('group_by', state.group_by.join(','));
    history.replaceState(null, '', `#/usage?${sp}`);
  }
  function clearErrors() {
    for (const e of Object.values(errs)) e.textContent = '';
    for (const i of Object.values(inputs)) i.removeAttribute('aria-invalid');
  }
  /** Shows a 400 next to its field; true if it was one. */
  function fieldError(e) {
    if (!(e instanceof ApiError) || e.status !== 400 || !errs[e.field]) return false;
    errs[e.field].textContent = e.message;
    const inp = inputs[e.field] || groupBoxes[0].firstChild;
    inp.setAttribute('aria-invalid', 'true');
    inp.focus();
    return true;
  }

  let run = 0;
  async function load() {
    const n = ++run;
    const out = results.querySelector('.results-body');
    const note = results.querySelector('#results-note');
    clearErrors();
    fill(note);
    fill(out, loading('Loading usage…'));
    let res;
    try {
      res = await api.usage(query());
    } catch (e) {
      if (stopped || n !== run) return;
      fill(out, fieldError(e) ? h('p', { class: 'empty' }, 'Fix the filters above and apply them again.') : errorBox(e, load));
      return;
    }
    if (stopped || n !== run) return;
    const rows = res.data || [];
    fill(note, `${fmt.int(rows.length)} ${rows.length === 1 ? 'row' : 'rows'} · `, timeEl(res.from), ' to ', timeEl(res.to));
    fill(out, rows.length ? usageTable(res.group_by || state.group_by, rows) : h('p', { class: 'empty' }, 'No requests match these filters.'));
    announce(`${rows.length} usage rows`);
  }

  async function exportCSV() {
    read();
    clearErrors();
    exportBtn.disabled = true;
    fill(exportStatus, 'Preparing…');
    try {
      const blob = await api.usageCSV(query());
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: `parley-usage-${state.from}-to-${state.to || 'now'}.csv`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      fill(exportStatus, 'CSV downloaded.');
    } catch (e) {
      if (!fieldError(e)) fill(exportStatus, h('span', { class: 'text-bad' }, `Export failed: ${e.message}`));
      else fill(exportStatus);
    } finally {
      exportBtn.disabled = false;
    }
  }

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    read();
    remember();
    load();
  });

  // Suggestions for the filters: key names, model and upstream names.
  Promise.allSettled([api.keys(), api.models()]).then(([k, m]) => {
    if (stopped) return;
    const opts = (list, names) => fill(list, [...new Set(names)].sort().map((n) => h('option', { value: n })));
    if (k.status === 'fulfilled') opts(lists.key, (k.value.data || []).map((x) => x.name));
    if (m.status === 'fulfilled') {
      opts(lists.model, (m.value.data || []).filter((x) => !x.glob).map((x) => x.name));
      opts(lists.upstream, (m.value.upstreams || []).map((x) => x.name));
    }
  });

  load();
  return () => { stopped = true; };
}

function dimCell(d, r) {
  const v = r[d];
  if (d === 'hour') return timeEl(v);
  if (d === 'status') {
    const cls = v >= 500 ? 'bad' : v >= 400 ? 'warn' : 'ok';
    return h('span', { class: `pill pill-${cls}` }, String(v ?? '—'));
  }
  if (v === '' || v == null) return h('span', { class: 'muted' }, '(none)');
  return d === 'dialect' || d === 'operation' ? h('code', null, v) : String(v);
}

function usageTable(groups, rows) {
  const t = totals(rows);
  const avg = (r) => (r.requests ? r.duration_ms / r.requests : null);
  const measures = [
    { label: 'Requests', num: true, cell: (r) => fmt.int(r.requests), total: fmt.int(t.requests) },
    { label: 'Input tokens', num: true, cell: (r) => fmt.int(r.input_tokens), total: fmt.int(t.input_tokens) },
    { label: 'Output tokens', num: true, cell: (r) => fmt.int(r.output_tokens), total: fmt.int(t.output_tokens) },
    { label: 'Cache read', num: true, title: 'Cache read tokens', cell: (r) => fmt.int(r.cache_read_tokens), total: fmt.int(t.cache_read_tokens) },
    { label: 'Cache write', num: true, title: 'Cache write tokens', cell: (r) => fmt.int(r.cache_write_tokens), total: fmt.int(t.cache_write_tokens) },
    { label: 'Reasoning', num: true, title: 'Reasoning tokens', cell: (r) => fmt.int(r.reasoning_tokens), total: fmt.int(t.reasoning_tokens) },
    { label: 'Cost', num: true, cell: (r) => fmt.usd(r.cost_usd), total: fmt.usd(t.cost_usd) },
    { label: 'Avg duration', num: true, title: 'Mean duration of a request', cell: (r) => fmt.ms(avg(r)), total: fmt.ms(avg(t)) },
  ];
  const dims = groups.length
    ? groups.map((d) => ({ label: LABEL[d] || d, cell: (r) => dimCell(d, r) }))
    : [{ label: 'Requests in range', cell: () => 'All' }];
  return table({
    caption: 'Usage',
    columns: [...dims, ...measures],
    rows,
    foot: groups.length ? [{ node: 'Total', span: dims.length }, ...measures.map((m) => ({ node: m.total, num: true }))] : null,
  });
}
