// DOM helpers and formatting. Every string from the API reaches the page
// through text nodes and attributes set here, never as markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function set(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style') Object.assign(el.style, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function add(el, kids) {
  for (const kid of kids.flat(Infinity)) {
    if (kid == null || kid === false || kid === true) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
}

/** h builds an HTML element: h('td', {class: 'num'}, text, child...). */
export function h(tag, props, ...kids) {
  const el = document.createElement(tag);
  set(el, props);
  add(el, kids);
  return el;
}

/** s builds an SVG element. */
export function s(tag, props, ...kids) {
  const el = document.createElementNS(SVG_NS, tag);
  set(el, props);
  add(el, kids);
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...kids) {
  el.replaceChildren();
  add(el, kids);
  return el;
}

let uid = 0;
/** A fresh id for labels and descriptions. */
export const nextId = (p = 'id') => `${p}-${++uid}`;

/** Tells screen readers something (polite). */
export function announce(text) {
  const el = document.getElementById('announcer');
  if (!el) return;
  el.textContent = '';
  setTimeout(() => { el.textContent = text; }, 30);
}

// Formatting ---------------------------------------------------------------

const intFmt = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const compactFmt = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const decFmt = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const usdFmt = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' });
const usdSmall = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', maximumSignificantDigits: 3 });
const usdPrice = new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD', minimumFractionDigits: 2, maximumFractionDigits: 4 });
const pctFmt = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const timeFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const secFmt = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const dayFmt = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export const fmt = {
  int: (v) => (num(v) == null ? '—' : intFmt.format(v)),
  compact: (v) => (num(v) == null ? '—' : Math.abs(v) < 10000 ? intFmt.format(v) : compactFmt.format(v)),
  dec: (v) => (num(v) == null ? '—' : decFmt.format(v)),
  /** Money: cents, or three significant digits below a cent. */
  usd: (v) => (num(v) == null ? '—' : v !== 0 && Math.abs(v) < 0.01 ? usdSmall.format(v) : usdFmt.format(v)),
  /** A price per million tokens. */
  price: (v) => (num(v) == null ? '—' : usdPrice.format(v)),
  pct: (v) => (num(v) == null ? '—' : pctFmt.format(v)),
  ms: (v) => (num(v) == null ? '—' : v >= 10000 ? `${decFmt.format(v / 1000)} s` : v < 10 ? `${decFmt.format(v)} ms` : `${intFmt.format(v)} ms`),
  dateTime: (v) => { const d = toDate(v); return d ? dateTimeFmt.format(d) : '—'; },
  date: (v) => { const d = toDate(v); return d ? dateFmt.format(d) : '—'; },
  time: (v) => { const d = toDate(v); return d ? timeFmt.format(d) : '—'; },
  clock: (v) => { const d = toDate(v); return d ? secFmt.format(d) : '—'; },
  day: (v) => { const d = toDate(v); return d ? dayFmt.format(d) : '—'; },
};

export function toDate(v) {
  if (v == null || v === '') return null;
  const d = v instanceof Date ? v : new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** A <time> element for an API timestamp. */
export function timeEl(v, format = fmt.dateTime) {
  const d = toDate(v);
  if (!d) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: d.toISOString(), title: d.toISOString() }, format(d));
}

// Shared bits of pages --------------------------------------------------------

/** A page header: title, optional lead text and actions on the right. */
export function pageHead(title, lead, ...actions) {
  return h('header', { class: 'page-head' },
    h('div', null, h('h1', { tabindex: '-1' }, title), lead ? h('p', { class: 'lead' }, lead) : null),
    actions.length ? h('div', { class: 'page-actions' }, actions) : null);
}

/** A card with a title and content. */
export function card(title, props, ...kids) {
  const id = nextId('card');
  return h('section', { class: 'card', 'aria-labelledby': id, ...props },
    h('h2', { class: 'card-title', id }, title), kids);
}

/** A loading placeholder. */
export const loading = (what = 'Loading…') => h('p', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), what);

/** An error notice with an optional retry. */
export function errorBox(err, retry) {
  return h('div', { class: 'notice notice-error', role: 'alert' },
    h('p', null, h('strong', null, 'Something went wrong. '), err?.message || String(err)),
    retry ? h('button', { type: 'button', class: 'btn btn-sm', onclick: retry }, 'Try again') : null);
}

/** A neutral notice. */
export const notice = (...kids) => h('div', { class: 'notice' }, kids);

/** An empty-state line inside a card or table. */
export const empty = (text) => h('p', { class: 'empty' }, text);

/**
 * A table: columns [{label, num, cls, cell(row) → node|string}], optional
 * footer cells [{node, num, span}]. Numbers are right-aligned.
 */
export function table({ columns, rows, caption, foot, rowProps, head }) {
  const cls = (c) => [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null;
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'table' },
      caption ? h('caption', { class: 'sr-only' }, caption) : null,
      h('thead', null, head || null,
        h('tr', null, columns.map((c) => h('th', { scope: 'col', class: cls(c), title: c.title }, c.label)))),
      h('tbody', null, rows.map((r) => h('tr', rowProps ? rowProps(r) : null,
        columns.map((c, i) => h(i === 0 && !c.plain ? 'th' : 'td', { scope: i === 0 && !c.plain ? 'row' : null, class: cls(c) }, c.cell(r)))))),
      foot ? h('tfoot', null, h('tr', null, foot.map((f, i) => h(i === 0 ? 'th' : 'td', { scope: i === 0 ? 'row' : null, class: f.num ? 'num' : null, colspan: f.span }, f.node)))) : null));
}

/** Opens a modal <dialog> built by build(close); resolves with close's value. */
export function modal(build, { label, className } = {}) {
  return new Promise((resolve) => {
    const opener = document.activeElement;
    const dlg = h('dialog', { class: `dialog ${className || ''}`, 'aria-label': label });
    let done = false;
    const close = (value) => {
      if (done) return;
      done = true;
      dlg.close();
      dlg.remove();
      if (opener && opener.isConnected) opener.focus();
      resolve(value);
    };
    dlg.addEventListener('cancel', (e) => { e.preventDefault(); close(undefined); });
    add(dlg, [build(close)]);
    document.body.append(dlg);
    dlg.showModal();
    const first = dlg.querySelector('[autofocus]');
    if (first) first.focus();
  });
}
