// Music tasks: the tasks submitted through the songgen endpoints (music,
// lyrics, upload, concat), the most recently updated first, with their
// status, progress and the delivery of their callbacks, refreshed every 5
// seconds while shown.

import { api } from '../api.js';
import { h, fill, fmt, pageHead, loading, errorBox, toDate, nextId } from '../ui.js';

const PAGE = 50;
const POLL_MS = 5000;

const STATUS = {
  in_progress: ['In progress', 'info'],
  success: ['Succeeded', 'ok'],
  fail: ['Failed', 'bad'],
};
const CALLBACK = {
  pending: ['Pending', 'warn'],
  done: ['Delivered', 'ok'],
  abandoned: ['Abandoned', 'bad'],
};

export function render(view) {
  let stopped = false;
  let timer = 0;
  let tasks = []; // the loaded tasks, the most recently updated first
  let next = null; // where the next older page starts, or null: no more
  let chain = Promise.resolve();
  // One load at a time: a refresh never overlaps "Load older".
  const serial = (fn) => (chain = chain.then(fn, fn));
  const rows = new Map(); // id → { json, tr }

  const body = h('div', null, loading('Loading tasks…'));
  const updated = h('span', { class: 'muted small' });
  const count = h('span', { class: 'count' }, '0');
  const shown = h('span', { class: 'muted small', role: 'status', tabindex: '-1' });
  const say = (text) => { if (shown.textContent !== text) shown.textContent = text; };
  const older = h('button', { type: 'button', class: 'btn', onclick: () => serial(loadOlder) }, 'Load older');
  const tbody = h('tbody');
  const titleId = nextId('tasks-title');
  const tableCard = h('section', { class: 'card', 'aria-labelledby': titleId },
    h('div', { class: 'card-head' },
      h('h2', { class: 'card-title', id: titleId }, 'Recent tasks ', count),
      h('span', { class: 'live-note' }, h('span', { class: 'pulse', 'aria-hidden': 'true' }), updated)),
    h('div', { class: 'table-wrap' },
      h('table', { class: 'table tasks-table' },
        h('caption', { class: 'sr-only' }, 'Music tasks, the most recently updated first'),
        h('thead', null, h('tr', null, [
          'Task', 'Owner', 'Action', 'Status', 'Progress', 'Submitted', 'Updated / finished', 'Callback', 'Upstream / model',
        ].map((c) => h('th', { scope: 'col' }, c)))),
        tbody)),
    h('div', { class: 'table-foot' }, shown, older));
  const emptyCard = h('div', { class: 'card empty-card' },
    h('p', null, h('strong', null, 'No music tasks yet')),
    h('p', { class: 'muted' }, 'Tasks appear here when clients submit music, lyrics, uploads or concatenations through the songgen endpoints.'));

  fill(view,
    pageHead('Music tasks', 'Tasks submitted through the songgen endpoints, the most recently updated first: their progress, and the delivery of their callbacks.'),
    body);

  function draw() {
    count.textContent = fmt.int(tasks.length);
    if (!tasks.length) {
      fill(body, emptyCard);
      rows.clear();
      fill(tbody);
      return;
    }
    const seen = new Set();
    const trs = tasks.map((t) => {
      seen.add(t.id);
      const json = JSON.stringify(t);
      const had = rows.get(t.id);
      if (had && had.json === json) return had.tr;
      const tr = row(t);
      rows.set(t.id, { json, tr });
      return tr;
    });
    for (const id of [...rows.keys()]) if (!seen.has(id)) rows.delete(id);
    // Rows that did not change are moved, not rebuilt (a tooltip or a
    // selection in them survives the refresh).
    trs.forEach((tr, i) => { if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null); });
    while (tbody.children.length > trs.length) tbody.lastChild.remove();
    older.hidden = !next;
    say(next ? `The latest ${fmt.int(tasks.length)} tasks shown` : `All ${fmt.int(tasks.length)} tasks shown`);
    if (body.firstChild !== tableCard) fill(body, tableCard);
  }

  /** The first pages again, as many tasks as are shown (at least one page). */
  async function refresh() {
    if (stopped) return;
    const want = Math.max(tasks.length, PAGE);
    let got = [];
    let before;
    let more = null;
    try {
      do {
        const res = await api.tasks({ limit: PAGE, before });
        got = got.concat(res.data || []);
        more = res.next_before || null;
        before = more;
      } while (more && got.length < want && !stopped);
    } catch (e) {
      if (stopped) return;
      if (body.firstChild === tableCard || body.firstChild === emptyCard) {
        fill(updated, h('span', { class: 'text-bad' }, 'Not updated: ', e.message));
      } else {
        fill(body, errorBox(e, () => { fill(body, loading('Loading tasks…')); serial(refresh); }));
      }
      return;
    }
    if (stopped) return;
    tasks = dedupe(got);
    next = more;
    draw();
    const now = new Date();
    fill(updated, 'Refreshed every 5 s · updated ', h('time', { datetime: now.toISOString() }, fmt.clock(now)));
  }

  async function loadOlder() {
    if (stopped || !next) return;
    const focused = document.activeElement === older;
    older.disabled = true;
    older.textContent = 'Loading…';
    try {
      const res = await api.tasks({ limit: PAGE, before: next });
      if (stopped) return;
      const have = tasks.length;
      tasks = dedupe(tasks.concat(res.data || []));
      next = res.next_before || null;
      draw();
      if (tasks.length === have) say('No older tasks.');
    } catch (e) {
      if (!stopped) say(`Older tasks could not be loaded: ${e.message}`);
    } finally {
      older.disabled = false;
      older.textContent = 'Load older';
      // The button hides when there is no more: the focus stays in the table's foot.
      if (focused && older.hidden) shown.focus();
      else if (focused) older.focus();
    }
  }

  function poll() {
    timer = 0;
    if (stopped) return;
    const again = () => { if (!stopped) timer = setTimeout(poll, POLL_MS); };
    if (document.hidden) { again(); return; }
    serial(refresh).then(again, again);
  }

  serial(refresh).then(() => { if (!stopped) timer = setTimeout(poll, POLL_MS); });
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

function dedupe(list) {
  const ids = new Set();
  return list.filter((t) => t && t.id && !ids.has(t.id) && ids.add(t.id));
}

/** A task's time: the clock for today, else the date too. */
function when(v) {
  const d = toDate(v);
  if (!d) return h('span', { class: 'muted' }, '—');
  const today = new Date().toDateString() === d.toDateString();
  return h('time', { datetime: d.toISOString(), title: d.toISOString(), class: today ? 'nowrap' : null }, today ? fmt.clock(d) : fmt.dateTime(d));
}

function row(t) {
  const [statusText, statusLevel] = STATUS[t.status] || [t.status || 'unknown', 'neutral'];
  const p = Math.max(0, Math.min(100, Number(t.progress) || 0));
  const fillEl = h('span', { class: 'progress-fill' });
  fillEl.style.width = `${p}%`;
  const cls = t.status === 'fail' ? 'progress progress-fail' : t.status === 'success' ? 'progress progress-done' : 'progress';
  return h('tr', { dataset: { task: t.id, status: t.status || '', callback: t.callback?.state || '' } },
    h('th', { scope: 'row' }, h('span', { class: 'mono task-id' }, t.id)),
    h('td', { class: 'nowrap' }, t.owner || h('span', { class: 'muted' }, '—')),
    h('td', null, t.action || '—'),
    h('td', null,
      h('span', { class: `pill pill-${statusLevel}` }, statusText),
      t.fail_reason ? h('span', { class: 'cell-sub' }, t.fail_reason) : null),
    h('td', null, h('span', { class: cls },
      h('span', { class: 'progress-track', 'aria-hidden': 'true' }, fillEl),
      h('span', { class: 'progress-text num' }, `${p}%`))),
    h('td', null, when(t.submitted_at)),
    h('td', null, t.finished_at
      ? [h('span', { class: 'cell-sub' }, 'Finished'), when(t.finished_at)]
      : [h('span', { class: 'cell-sub' }, 'Updated'), when(t.updated_at)]),
    h('td', null, callback(t.callback)),
    h('td', null,
      h('span', { class: 'cell-main' }, t.upstream || '—'),
      t.model ? h('span', { class: 'cell-sub mono' }, t.model) : null));
}

function callback(cb) {
  if (!cb) return h('span', { class: 'muted' }, 'None');
  const [text, level] = CALLBACK[cb.state] || [cb.state || 'unknown', 'neutral'];
  const attempts = Number(cb.attempts) || 0;
  const tries = `${fmt.int(attempts)} ${attempts === 1 ? 'attempt' : 'attempts'}`;
  const details = [tries];
  if (cb.next_at && cb.state === 'pending') details.push(`next at ${fmt.dateTime(cb.next_at)}`);
  if (cb.last_error) details.push(`last error: ${cb.last_error}`);
  const title = `${text} · ${details.join(' · ')}`;
  return h('span', { class: 'callback', title },
    h('span', { class: `pill pill-${level}` }, text),
    h('span', { class: 'cell-sub' }, cb.host || '', h('span', { 'aria-hidden': 'true' }, ` · ${tries}`)),
    h('span', { class: 'sr-only' }, `, ${details.join(', ')}`));
}
