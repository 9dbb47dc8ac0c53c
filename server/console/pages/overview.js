// Overview: the selected range's totals, requests and errors over time,
// breakdowns by model, key and upstream (from the usage ledger), and the
// answering replica's live figures, refreshed every 5 seconds.

import { api, totals } from '../api.js';
import { h, fill, fmt, card, pageHead, loading, errorBox, notice, table, nextId } from '../ui.js';
import { timeSeries, barList } from '../chart.js';

const HOUR = 3600e3;
const RANGES = [
  { id: 'hour', label: 'Last hour', ms: HOUR, words: 'in the last hour' },
  { id: 'day', label: 'Last 24 hours', ms: 24 * HOUR, words: 'in the last 24 hours' },
  { id: 'month', label: 'Last 30 days', ms: 30 * 24 * HOUR, words: 'in the last 30 days' },
];
const POLL_MS = 5000;

export function render(view, ctx) {
  let range = RANGES.find((r) => r.id === ctx.params.get('range')) || RANGES[1];
  let charts = [];
  let stopped = false;
  let timer = 0;
  let usageRun = 0;

  const selector = rangeSelector(range.id, (id) => {
    range = RANGES.find((r) => r.id === id);
    history.replaceState(null, '', `#/overview?range=${id}`);
    loadUsage();
  });
  const kpis = h('div', { class: 'kpis', 'aria-live': 'off' });
  const chartBody = h('div', { class: 'chart-body' });
  const chartCard = card('Requests and errors', { class: 'card card-chart' }, chartBody);
  const byModel = h('div');
  const byKey = h('div');
  const byUpstream = h('div');
  const liveBody = h('div', null, loading('Loading live figures…'));
  const updated = h('span', { class: 'muted small live-updated' });
  const liveCard = h('section', { class: 'card card-live', 'aria-labelledby': 'live-title' },
    h('div', { class: 'card-head' },
      h('h2', { class: 'card-title', id: 'live-title' }, h('span', { class: 'pulse', 'aria-hidden': 'true' }), 'Live on this replica'),
      updated),
    liveBody);

  fill(view,
    pageHead('Overview', 'Traffic through this gateway, from the usage ledger, and what is in flight now.', selector),
    ctx.info?.ledger === false
      ? notice(h('strong', null, 'The usage ledger is off. '), 'Parley keeps no record of finished requests (ledger.disabled), so there are no totals, chart or breakdowns. The live figures below still work.')
      : [kpis, chartCard, h('div', { class: 'grid-3' },
        card('By model', null, byModel), card('By key', null, byKey), card('By upstream', null, byUpstream))],
    liveCard);

  async function loadUsage() {
    if (ctx.info?.ledger === false) return;
    const run = ++usageRun;
    const now = new Date();
    const from = new Date(now.getTime() - range.ms);
    const q = { from: from.toISOString(), to: now.toISOString() };
    charts.forEach((c) => c.dispose());
    charts = [];
    fill(kpis, loading('Loading totals…'));
    fill(chartBody, loading('Loading the chart…'));
    for (const el of [byModel, byKey, byUpstream]) fill(el, loading());
    let series, models, keys, upstreams;
    try {
      [series, models, keys, upstreams] = await Promise.all([
        api.usage({ ...q, group_by: 'hour,status' }),
        api.usage({ ...q, group_by: 'model' }),
        api.usage({ ...q, group_by: 'key' }),
        api.usage({ ...q, group_by: 'upstream' }),
      ]);
    } catch (e) {
      if (run !== usageRun || stopped) return;
      fill(kpis, errorBox(e, loadUsage));
      fill(chartBody);
      for (const el of [byModel, byKey, byUpstream]) fill(el);
      return;
    }
    if (run !== usageRun || stopped) return;
    const rows = series.data || [];
    const t = totals(rows);
    const errors = rows.reduce((n, r) => n + (r.status >= 400 ? r.requests : 0), 0);
    fill(kpis,
      kpi('Requests', fmt.int(t.requests), range.words),
      kpi('Errors', fmt.int(errors), t.requests ? `${fmt.pct(errors / t.requests)} of requests · status ≥ 400` : 'status ≥ 400', errors ? 'kpi-bad' : ''),
      kpi('Tokens', fmt.int(t.input_tokens + t.output_tokens), `${fmt.compact(t.input_tokens)} in · ${fmt.compact(t.output_tokens)} out`),
      kpi('Cost', fmt.usd(t.cost_usd), 'by the models’ pricing'));

    const { buckets, kind, tickLabel, tipTitle, unit } = bucketize(rows, from, now, range.id);
    fill(chartCard.querySelector('.card-title'), `Requests and errors per ${unit}`);
    if (!t.requests) {
      fill(chartBody, h('p', { class: 'empty' }, `No requests ${range.words}.`));
    } else {
      const chart = timeSeries({
        buckets, kind, tickLabel, tipTitle,
        label: `Requests and errors per ${unit} ${range.words}`,
        series: [{ name: 'requests', label: 'Requests', cls: 's-1' }, { name: 'errors', label: 'Errors', cls: 's-err' }],
      });
      charts.push(chart);
      fill(chartBody, chart);
    }
    const bars = (data, dim, label) => barList(
      (data.data || []).map((r) => ({ label: r[dim] || '', value: r.requests, extra: r.cost_usd })),
      { label, extraFormat: fmt.usd, emptyText: `No requests ${range.words}.` });
    fill(byModel, bars(models, 'model', 'Requests by model'));
    fill(byKey, bars(keys, 'key', 'Requests by key'));
    fill(byUpstream, bars(upstreams, 'upstream', 'Requests by upstream'));
  }

  async function poll() {
    try {
      const st = await api.stats();
      if (stopped) return;
      renderLive(liveBody, st);
      fill(updated, 'Updated ', h('time', { datetime: st.time || new Date().toISOString() }, fmt.clock(st.time || new Date())));
    } catch (e) {
      if (stopped) return;
      fill(updated, h('span', { class: 'text-bad' }, 'Not updated: ', e.message));
      if (!liveBody.querySelector('table')) fill(liveBody, errorBox(e));
    } finally {
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    }
  }

  loadUsage();
  poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
    charts.forEach((c) => c.dispose());
  };
}

function rangeSelector(current, onChange) {
  const name = nextId('range');
  return h('fieldset', { class: 'segmented' },
    h('legend', { class: 'sr-only' }, 'Range'),
    RANGES.map((r) => {
      const id = `${name}-${r.id}`;
      return [
        h('input', { type: 'radio', name, id, value: r.id, checked: r.id === current, onchange: () => onChange(r.id) }),
        h('label', { for: id }, r.label),
      ];
    }));
}

function kpi(label, value, sub, cls = '') {
  return h('section', { class: `card kpi ${cls}`, 'aria-label': label },
    h('h2', { class: 'kpi-label' }, label),
    h('p', { class: 'kpi-value num' }, value),
    h('p', { class: 'kpi-sub' }, sub));
}

/** Groups hourly rows into the chart's intervals: hours, or days for 30 days. */
function bucketize(rows, from, now, rangeId) {
  const daily = rangeId === 'month';
  const start = new Date(from);
  if (daily) start.setHours(0, 0, 0, 0);
  else start.setMinutes(0, 0, 0);
  const buckets = [];
  const index = new Map();
  for (let t = new Date(start); t <= now;) {
    const next = new Date(t);
    if (daily) next.setDate(next.getDate() + 1);
    else next.setTime(next.getTime() + HOUR);
    index.set(t.getTime(), buckets.length);
    buckets.push({ start: new Date(t), end: next, values: { requests: 0, errors: 0 } });
    t = next;
  }
  for (const r of rows) {
    const t = new Date(r.hour || r.day);
    if (Number.isNaN(t.getTime())) continue;
    if (daily) t.setHours(0, 0, 0, 0);
    else t.setMinutes(0, 0, 0);
    let i = index.get(t.getTime());
    if (i === undefined) i = t < start ? 0 : buckets.length - 1;
    const b = buckets[i];
    b.values.requests += r.requests || 0;
    if (r.status >= 400) b.values.errors += r.requests || 0;
  }
  return daily
    ? { buckets, kind: 'bars', unit: 'day', tickLabel: fmt.day, tipTitle: (b) => fmt.date(b.start) }
    : {
      buckets, kind: rangeId === 'day' ? 'lines' : 'bars', unit: 'hour', tickLabel: fmt.time,
      tipTitle: (b) => `${fmt.day(b.start)}, ${fmt.time(b.start)}–${fmt.time(b.end)}`,
    };
}

function renderLive(el, st) {
  const inflight = st.in_flight || {};
  const ups = st.upstreams || [];
  const win = ups.find((u) => u.window_seconds)?.window_seconds;
  const winText = win ? (win % 60 ? `${win} s` : `${win / 60} min`) : '';
  const pct = (v) => (v == null ? h('span', { class: 'muted', title: 'no samples' }, '—') : fmt.ms(v));
  const rate = (u) => {
    if (!u.requests) return h('span', { class: 'muted' }, '—');
    const r = u.error_rate ?? (u.errors / u.requests);
    const level = r >= 0.05 ? 'bad' : r >= 0.01 ? 'warn' : 'ok';
    return h('span', { class: `pill pill-${level}` }, fmt.pct(r));
  };
  const p = (name, what) => [name, h('span', { class: 'sr-only' }, ` ${what}`)];
  fill(el,
    h('div', { class: 'live-counters' },
      h('div', { class: 'counter' }, h('span', { class: 'counter-value num', id: 'live-requests' }, fmt.int(inflight.requests ?? 0)), h('span', { class: 'counter-label' }, 'Requests in flight')),
      h('div', { class: 'counter' }, h('span', { class: 'counter-value num', id: 'live-streams' }, fmt.int(inflight.streams ?? 0)), h('span', { class: 'counter-label' }, 'Streams in flight'))),
    h('h3', { class: 'subhead' }, 'Upstream health', winText ? h('span', { class: 'muted' }, ` · last ${winText}`) : null),
    ups.length ? table({
      caption: `Upstream health over the last ${winText || 'window'}`,
      head: h('tr', { class: 'group-row' },
        h('td', { colspan: '5' }),
        h('th', { scope: 'colgroup', colspan: '3' }, 'Latency'),
        h('th', { scope: 'colgroup', colspan: '3' }, 'Time to first token')),
      columns: [
        { label: 'Upstream', cell: (u) => u.name },
        { label: 'Dialect', cell: (u) => h('code', null, u.dialect || '—') },
        { label: 'Requests', num: true, cell: (u) => fmt.int(u.requests) },
        { label: 'Errors', num: true, cell: (u) => fmt.int(u.errors) },
        { label: 'Error rate', num: true, cell: rate },
        { label: p('p50', 'latency'), num: true, cls: 'group-start', cell: (u) => pct(u.latency_ms?.p50) },
        { label: p('p90', 'latency'), num: true, cell: (u) => pct(u.latency_ms?.p90) },
        { label: p('p99', 'latency'), num: true, cell: (u) => pct(u.latency_ms?.p99) },
        { label: p('p50', 'time to first token'), num: true, cls: 'group-start', cell: (u) => pct(u.ttft_ms?.p50) },
        { label: p('p90', 'time to first token'), num: true, cell: (u) => pct(u.ttft_ms?.p90) },
        { label: p('p99', 'time to first token'), num: true, cell: (u) => pct(u.ttft_ms?.p99) },
      ],
      rows: ups,
    }) : h('p', { class: 'empty' }, 'No upstream has served a request recently.'));
}
