// Models & routes: what clients may ask for, where each model is sent (by
// weight, then the fallbacks in order), the dialect each upstream speaks,
// pricing and context windows.

import { api } from '../api.js';
import { h, fill, fmt, pageHead, loading, errorBox, table, card, nextId } from '../ui.js';

export function render(view) {
  let stopped = false;
  const body = h('div', { class: 'stack' }, loading('Loading models…'));
  fill(view, pageHead('Models & routes', 'The models clients may ask for and the upstreams Parley sends them to.'), body);

  async function load() {
    fill(body, loading('Loading models…'));
    let res;
    try {
      res = await api.models();
    } catch (e) {
      if (!stopped) fill(body, errorBox(e, load));
      return;
    }
    if (stopped) return;
    const models = res.data || [];
    const upstreams = res.upstreams || [];
    const uses = new Map();
    for (const m of models) for (const r of m.routes || []) uses.set(r.upstream, (uses.get(r.upstream) || 0) + 1);

    const filterId = nextId('filter');
    const filter = h('input', { id: filterId, type: 'search', placeholder: 'Filter by model or upstream', autocomplete: 'off', spellcheck: 'false' });
    const list = h('div', { class: 'model-list' });
    const draw = () => {
      const q = filter.value.trim().toLowerCase();
      const shown = models.filter((m) => !q || m.name.toLowerCase().includes(q)
        || (m.routes || []).some((r) => `${r.upstream} ${r.upstream_model || ''}`.toLowerCase().includes(q)));
      fill(list, shown.length ? shown.map(modelCard) : h('p', { class: 'empty' }, q ? 'No model matches this filter.' : 'No models are configured.'));
    };
    filter.addEventListener('input', draw);
    draw();

    fill(body,
      card('Upstreams', null, upstreams.length ? table({
        caption: 'Upstreams',
        rows: upstreams,
        columns: [
          { label: 'Upstream', cell: (u) => u.name },
          { label: 'Speaks', cell: (u) => h('code', null, u.dialect || '—') },
          { label: 'Base URL', cell: (u) => (u.base_url ? h('span', { class: 'mono break' }, u.base_url) : h('span', { class: 'muted' }, 'built in')) },
          { label: 'Models routed', num: true, cell: (u) => fmt.int(uses.get(u.name) || 0) },
        ],
      }) : h('p', { class: 'empty' }, 'No upstreams are configured.')),
      h('section', { class: 'models-section', 'aria-labelledby': 'models-title' },
        h('div', { class: 'section-head' },
          h('h2', { id: 'models-title', class: 'section-title' }, 'Models ', h('span', { class: 'count' }, fmt.int(models.length))),
          h('div', { class: 'field field-inline' }, h('label', { for: filterId, class: 'sr-only' }, 'Filter models'), filter)),
        list));
  }

  load();
  return () => { stopped = true; };
}

function modelCard(m) {
  const routes = m.routes || [];
  const weighted = routes.filter((r) => !r.fallback);
  const weightSum = weighted.reduce((n, r) => n + (r.weight || 0), 0);
  let fallbackN = 0;
  const pr = m.pricing;
  const id = nextId('model');
  return h('article', { class: 'card model', 'aria-labelledby': id, dataset: { model: m.name } },
    h('header', { class: 'model-head' },
      h('h3', { id, class: 'model-name mono' }, m.name),
      m.glob ? h('span', { class: 'badge', title: 'A glob: it matches every model name of this pattern' }, 'pattern') : null),
    h('dl', { class: 'facts' },
      h('div', null, h('dt', null, 'Context window'), h('dd', null, m.context_window ? `${fmt.int(m.context_window)} tokens` : h('span', { class: 'muted' }, 'Not set'))),
      h('div', null, h('dt', null, 'Pricing per 1M tokens'), h('dd', null, pr
        ? h('span', { class: 'prices' },
          price('Input', pr.input), price('Output', pr.output),
          pr.cache_read != null ? price('Cache read', pr.cache_read) : null,
          pr.cache_write != null ? price('Cache write', pr.cache_write) : null)
        : h('span', { class: 'muted' }, 'Not priced: costs count as $0')))),
    routes.length ? table({
      caption: `Routes of ${m.name}`,
      rows: routes.map((r, i) => ({ ...r, order: i + 1 })),
      columns: [
        { label: '#', num: true, cell: (r) => String(r.order) },
        { label: 'Upstream', plain: true, cell: (r) => r.upstream },
        { label: 'Speaks', plain: true, cell: (r) => h('code', null, r.dialect || '—') },
        { label: 'Upstream model', plain: true, cell: (r) => (r.upstream_model ? h('span', { class: 'mono' }, r.upstream_model) : h('span', { class: 'muted' }, 'as asked')) },
        { label: 'Weight', num: true, plain: true, cell: (r) => (r.fallback ? h('span', { class: 'muted' }, fmt.int(r.weight)) : fmt.int(r.weight)) },
        {
          label: 'Role', plain: true, cell: (r) => (r.fallback
            ? h('span', { class: 'pill pill-neutral' }, `Fallback ${++fallbackN}`)
            : h('span', { class: 'pill pill-ok' }, weighted.length > 1 && weightSum ? `Weighted · ${fmt.pct(r.weight / weightSum)}` : 'Primary')),
        },
      ],
    }) : h('p', { class: 'empty' }, 'No routes.'),
    routes.length > 1 ? h('p', { class: 'help route-note' }, weighted.length
      ? 'Each request goes first to a route drawn by weight; when it fails, the other routes are tried in the order listed.'
      : 'The routes are tried in the order listed.') : null);
}

function price(label, v) {
  return h('span', { class: 'price' }, h('span', { class: 'muted' }, `${label} `), fmt.price(v));
}
