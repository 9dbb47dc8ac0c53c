// A small SVG chart module: a time series (bars or lines) with axes, a
// tooltip on hover and on the arrow keys, and horizontal bar breakdowns.

import { h, s, fill, nextId, fmt } from './ui.js';

/** Round numbers for an axis from 0 to at least max: [0, step, …]. */
export function ticks(max, count = 4, integer = true) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 5, 10].map((k) => k * mag).find((st) => st >= raw && !(integer && st % 1));
  if (!step || (integer && step < 1)) step = Math.max(integer ? 1 : 0, Math.ceil(raw));
  const out = [];
  for (let i = 0; i * step < max + step * 0.999; i++) out.push(Math.round(i * step * 1e6) / 1e6);
  return out.length > 1 ? out : [0, step];
}

/**
 * A time series chart.
 *   buckets: [{start: Date, end: Date, values: {name: number}}]
 *   series:  [{name, label, cls}] drawn in order (bars overlap: the first is
 *            the whole, later ones a part of it, e.g. requests and errors)
 *   kind:    'bars' | 'lines'
 *   label:   what the chart shows, for screen readers
 *   tickLabel(start): the x axis's label of a bucket
 *   tipTitle(bucket): the tooltip's heading
 * Returns an element that draws itself to its width.
 */
export function timeSeries({ buckets, series, kind = 'bars', label, tickLabel = fmt.time, tipTitle, valueFormat = fmt.int, height = 220 }) {
  const tipId = nextId('tip');
  const tip = h('div', { class: 'chart-tip', id: tipId, role: 'status', hidden: true });
  const legend = h('ul', { class: 'legend', 'aria-hidden': 'true' },
    series.map((sr) => h('li', null, h('span', { class: `swatch ${sr.cls}` }), sr.label)));
  const host = h('div', { class: 'chart-host' });
  const wrap = h('figure', { class: 'chart' }, legend, host, tip);
  const peak = Math.max(0, ...buckets.flatMap((b) => series.map((sr) => b.values[sr.name] || 0)));
  const total = (name) => buckets.reduce((n, b) => n + (b.values[name] || 0), 0);
  const summary = `${label}. ${buckets.length} intervals; ` +
    series.map((sr) => `${sr.label}: ${valueFormat(total(sr.name))} in all`).join(', ') +
    `; at most ${valueFormat(peak)} in one interval. Focus the chart and use the arrow keys to read each interval.`;

  let active = -1;
  let geom = null;
  let svg = null;

  function draw(width) {
    width = Math.max(280, Math.floor(width));
    const m = { top: 10, right: 12, bottom: 26, left: 44 };
    const pw = width - m.left - m.right;
    const ph = height - m.top - m.bottom;
    const ys = ticks(peak);
    const ymax = ys[ys.length - 1];
    const n = Math.max(1, buckets.length);
    const bw = pw / n;
    const y = (v) => m.top + ph - (v / ymax) * ph;
    const xc = (i) => m.left + bw * (i + 0.5);
    geom = { m, pw, ph, bw, xc, y };

    svg = s('svg', {
      class: 'chart-svg', width, height, viewBox: `0 0 ${width} ${height}`, tabindex: '0',
      role: 'img', 'aria-label': summary, 'aria-describedby': tipId,
    });
    // Grid and y axis.
    const grid = s('g', { class: 'grid', 'aria-hidden': 'true' });
    for (const v of ys) {
      grid.append(s('line', { x1: m.left, x2: width - m.right, y1: y(v), y2: y(v) }));
      grid.append(s('text', { x: m.left - 6, y: y(v), class: 'ytick', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, fmt.compact(v)));
    }
    svg.append(grid);
    // X axis labels, at least 64px apart.
    const every = Math.max(1, Math.ceil(64 / bw));
    const xaxis = s('g', { class: 'xaxis', 'aria-hidden': 'true' });
    buckets.forEach((b, i) => {
      if ((buckets.length - 1 - i) % every) return;
      xaxis.append(s('text', { x: xc(i), y: height - 8, 'text-anchor': 'middle' }, tickLabel(b.start)));
    });
    svg.append(xaxis);
    // The highlight of the interval under the pointer.
    const hi = s('rect', { class: 'hi', x: 0, y: m.top, width: bw, height: ph, visibility: 'hidden', 'aria-hidden': 'true' });
    svg.append(hi);

    const plot = s('g', { class: 'plot', 'aria-hidden': 'true' });
    if (kind === 'bars') {
      // Bars keep a gap between them and stay slim when there are few.
      const full = Math.min(56, bw - Math.min(6, bw * 0.2));
      series.forEach((sr, k) => {
        const width = Math.max(1, k === 0 ? full : full - 2 * Math.min(full * 0.12, 3));
        buckets.forEach((b, i) => {
          const v = b.values[sr.name] || 0;
          if (v <= 0) return;
          const top = y(v);
          plot.append(s('rect', {
            class: `point bar ${sr.cls}`, x: xc(i) - width / 2, y: top,
            width, height: Math.max(1, m.top + ph - top), rx: Math.min(2, width / 6),
            'data-series': sr.name, 'data-value': v, 'data-index': i,
          }));
        });
      });
    } else {
      series.forEach((sr, k) => {
        const pts = buckets.map((b, i) => [xc(i), y(b.values[sr.name] || 0)]);
        const d = pts.map((p, i) => `${i ? 'L' : 'M'}${p[0].toFixed(1)},${p[1].toFixed(1)}`).join('');
        if (k === 0 && pts.length > 1) {
          plot.append(s('path', { class: `area ${sr.cls}`, d: `${d}L${pts[pts.length - 1][0].toFixed(1)},${m.top + ph}L${pts[0][0].toFixed(1)},${m.top + ph}Z` }));
        }
        plot.append(s('path', { class: `line ${sr.cls}`, d }));
        pts.forEach((p, i) => plot.append(s('circle', {
          class: `point dot ${sr.cls}`, cx: p[0], cy: p[1], r: buckets.length > 60 ? 1.5 : 2.75,
          'data-series': sr.name, 'data-value': buckets[i].values[sr.name] || 0, 'data-index': i,
        })));
      });
    }
    svg.append(plot);
    svg.append(s('line', { class: 'axis', x1: m.left, x2: width - m.right, y1: m.top + ph, y2: m.top + ph, 'aria-hidden': 'true' }));

    svg.addEventListener('pointermove', (e) => {
      const r = svg.getBoundingClientRect();
      const i = Math.floor((e.clientX - r.left - m.left) / bw);
      show(i >= 0 && i < buckets.length ? i : -1);
    });
    svg.addEventListener('pointerleave', () => { if (document.activeElement !== svg) show(-1); });
    svg.addEventListener('focus', () => show(active >= 0 ? active : buckets.length - 1));
    svg.addEventListener('blur', () => show(-1));
    svg.addEventListener('keydown', (e) => {
      const moves = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity };
      if (e.key === 'Escape') { show(-1); return; }
      if (!(e.key in moves)) return;
      e.preventDefault();
      const step = moves[e.key];
      const next = Number.isFinite(step) ? (active < 0 ? buckets.length - 1 : active + step) : step < 0 ? 0 : buckets.length - 1;
      show(Math.min(buckets.length - 1, Math.max(0, next)));
    });
    fill(host, svg);
    if (active >= 0) show(active);

    function show(i) {
      active = i;
      if (i < 0 || !buckets[i]) {
        hi.setAttribute('visibility', 'hidden');
        tip.hidden = true;
        return;
      }
      const b = buckets[i];
      hi.setAttribute('x', m.left + bw * i);
      hi.setAttribute('visibility', 'visible');
      fill(tip,
        h('strong', null, tipTitle ? tipTitle(b) : fmt.dateTime(b.start)),
        h('dl', null, series.map((sr) => [
          h('dt', null, h('span', { class: `swatch ${sr.cls}` }), sr.label),
          h('dd', null, valueFormat(b.values[sr.name] || 0)),
        ])));
      tip.hidden = false;
      // Beside the interval, inside the chart.
      const x = xc(i);
      const tw = tip.offsetWidth || 160;
      const left = x + 12 + tw > width ? x - 12 - tw : x + 12;
      tip.style.left = `${Math.max(0, left)}px`;
      tip.style.top = `${legend.offsetHeight + m.top}px`;
    }
  }

  let last = 0;
  const ro = new ResizeObserver((entries) => {
    const w = Math.floor(entries[0].contentRect.width);
    if (w > 0 && Math.abs(w - last) > 2) { last = w; draw(w); }
  });
  ro.observe(host);
  wrap.dispose = () => ro.disconnect();
  return wrap;
}

/**
 * Horizontal bars, biggest first: items [{label, value, extra}], the rest
 * beyond max folded into one "Others" row.
 */
export function barList(items, { valueFormat = fmt.int, extraFormat = null, label, max = 8, emptyText = 'No data in this range.' } = {}) {
  const rows = items.filter((it) => it.value > 0).sort((a, b) => b.value - a.value);
  if (!rows.length) return h('p', { class: 'empty' }, emptyText);
  let shown = rows;
  if (rows.length > max) {
    const rest = rows.slice(max - 1);
    shown = [...rows.slice(0, max - 1), {
      label: `${rest.length} others`, other: true,
      value: rest.reduce((n, r) => n + r.value, 0), extra: rest.reduce((n, r) => n + (r.extra || 0), 0),
    }];
  }
  const top = shown.reduce((m, r) => Math.max(m, r.value), 0);
  const whole = rows.reduce((n, r) => n + r.value, 0);
  return h('ol', { class: 'bars', 'aria-label': label },
    shown.map((r) => {
      const fillEl = h('span', { class: 'bar-fill' });
      fillEl.style.width = `${Math.max(0.5, (r.value / top) * 100)}%`;
      return h('li', { class: r.other ? 'bar-row other' : 'bar-row' },
        h('span', { class: `bar-label${r.label ? '' : ' muted'}`, title: r.label || null }, r.label || r.blank || '(none)'),
        h('span', { class: 'bar-value num' },
          valueFormat(r.value),
          h('span', { class: 'bar-detail' }, ` ${fmt.pct(whole ? r.value / whole : 0)}`,
            extraFormat ? ` · ${extraFormat(r.extra || 0)}` : null)),
        h('span', { class: 'bar-track', 'aria-hidden': 'true' }, fillEl));
    }));
}

/** A meter of use against a limit, with its text. */
export function meter(used, limit, text) {
  const ratio = limit > 0 ? used / limit : 0;
  const bar = h('span', { class: 'meter-fill' });
  bar.style.width = `${Math.min(100, ratio * 100)}%`;
  const level = ratio >= 1 ? 'over' : ratio >= 0.8 ? 'near' : 'ok';
  return h('span', { class: `meter meter-${level}` },
    h('span', { class: 'meter-track', role: 'meter', 'aria-valuemin': '0', 'aria-valuemax': String(limit), 'aria-valuenow': String(Math.min(used, limit)), 'aria-label': text }, bar),
    h('span', { class: 'meter-text' }, text));
}
