// The console's shell: the sign-in gate, the navigation rail and the hash
// router (#/overview, #/keys, #/usage, #/models, #/try, #/tasks).

import { api, session, whenUnauthorized, ApiError } from './api.js';
import { h, fill, nextId, announce } from './ui.js';

const pages = {
  overview: { title: 'Overview', load: () => import('./pages/overview.js') },
  keys: { title: 'Keys', load: () => import('./pages/keys.js') },
  usage: { title: 'Usage', load: () => import('./pages/usage.js') },
  models: { title: 'Models & routes', load: () => import('./pages/models.js') },
  try: { title: 'Try it', load: () => import('./pages/try.js') },
  tasks: { title: 'Music tasks', load: () => import('./pages/tasks.js') },
};

const $ = (id) => document.getElementById(id);
const ctx = { info: null, open: false };
let cleanup = null;
let rendered = 0;

/** The route of the hash: its page and its query. */
function route() {
  const m = /^#\/([a-z]+)(?:\?(.*))?$/.exec(location.hash);
  const name = m && pages[m[1]] ? m[1] : 'overview';
  return { name, params: new URLSearchParams(m?.[2] || '') };
}

async function show() {
  const { name, params } = route();
  if (!location.hash.startsWith(`#/${name}`)) {
    history.replaceState(null, '', `#/${name}`);
  }
  const page = pages[name];
  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  for (const a of document.querySelectorAll('.nav a')) {
    if (a.dataset.route === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  document.title = `${page.title} · Parley console`;
  const main = $('main');
  const n = ++rendered;
  main.setAttribute('aria-busy', 'true');
  const view = h('div', { class: 'view' });
  fill(main, view);
  try {
    const mod = await page.load();
    if (n !== rendered) return;
    cleanup = mod.render(view, { ...ctx, params }) || null;
  } catch (e) {
    if (n !== rendered) return;
    fill(view, h('div', { class: 'notice notice-error', role: 'alert' }, `This page could not be loaded: ${e.message}`));
  } finally {
    if (n === rendered) main.removeAttribute('aria-busy');
  }
  // After a navigation (not the first page) move focus to the new heading.
  if (n > 1) {
    const h1 = view.querySelector('h1');
    if (h1) h1.focus({ preventScroll: true });
    announce(`${page.title} page`);
  }
}

function enterShell(info, viaKey) {
  ctx.info = info;
  ctx.open = !viaKey;
  $('gate').hidden = true;
  $('shell').hidden = false;
  $('version').textContent = info.version ? `Parley ${info.version}` : '';
  $('session-note').textContent = viaKey ? 'Signed in with an admin key' : 'Open console: loopback, no keys configured';
  $('sign-out').hidden = !viaKey;
  rendered = 0;
  window.addEventListener('hashchange', show);
  show();
}

function leaveShell() {
  window.removeEventListener('hashchange', show);
  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  fill($('main'));
  $('shell').hidden = true;
  $('gate').hidden = false;
}

/** The gate's content: sign-in, admin API off, or unreachable. */
function gate(...kids) {
  leaveShell();
  fill($('gate-body'), kids);
  document.title = 'Parley console';
}

function signInForm(message) {
  const keyId = nextId('admin-key');
  const errId = nextId('err');
  const input = h('input', {
    id: keyId, name: 'admin_key', type: 'password', autocomplete: 'current-password', required: true,
    spellcheck: 'false', autocapitalize: 'off', 'aria-describedby': `${errId} ${keyId}-help`,
  });
  const err = h('p', { id: errId, class: 'field-error', role: 'alert' }, message || '');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  const form = h('form', {
    class: 'form', novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      const key = input.value.trim();
      err.textContent = '';
      input.removeAttribute('aria-invalid');
      if (!key) {
        err.textContent = 'Enter an admin key.';
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      submit.disabled = true;
      submit.textContent = 'Signing in…';
      try {
        const info = await api.info(key);
        session.set(key);
        enterShell(info, true);
      } catch (e2) {
        err.textContent = e2 instanceof ApiError && e2.status === 401
          ? 'That admin key was not accepted. Check it and try again.'
          : e2.message;
        input.setAttribute('aria-invalid', 'true');
        input.select();
        input.focus();
      } finally {
        submit.disabled = false;
        submit.textContent = 'Sign in';
      }
    },
  },
  h('div', { class: 'field' },
    h('label', { for: keyId }, 'Admin key'),
    input,
    h('p', { class: 'help', id: `${keyId}-help` }, 'One of the keys under admin.keys in Parley’s configuration. It is kept in this tab only, until you sign out or close it.'),
    err),
  submit);
  gate(h('h1', { id: 'gate-title', class: 'gate-title' }, 'Sign in to the console'), form);
  input.focus();
}

async function boot() {
  whenUnauthorized(() => {
    session.clear();
    signInForm('Your admin key is no longer accepted. Sign in again.');
  });
  // The skip link moves focus without touching the hash the router reads.
  document.querySelector('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    const target = $('shell').hidden ? $('gate-body').querySelector('h1, input') : $('main');
    if (target) { if (!target.hasAttribute('tabindex') && target.tagName === 'H1') target.tabIndex = -1; target.focus(); }
  });
  $('sign-out').addEventListener('click', () => {
    session.clear();
    signInForm();
    announce('Signed out');
  });
  let info;
  try {
    info = await api.info(null);
    enterShell(info, false);
    return;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.status === 404) {
      gate(h('h1', { id: 'gate-title', class: 'gate-title' }, 'The admin API is off'),
        h('p', null, 'This gateway has client keys but no admin keys, so its admin API — and with it this console — is turned off.'),
        h('p', null, 'To use the console, configure ', h('code', null, 'admin.keys'), ' in Parley’s configuration and reload it:'),
        h('pre', { class: 'code' }, 'admin:\n  keys: [${PARLEY_ADMIN_KEY}]'),
        h('p', { class: 'muted' }, 'Then sign in here with that key.'));
      return;
    }
    if (e.status !== 401) {
      gate(h('h1', { id: 'gate-title', class: 'gate-title' }, 'Parley did not answer'),
        h('p', { role: 'alert' }, e.message),
        h('button', { type: 'button', class: 'btn', onclick: () => location.reload() }, 'Try again'));
      return;
    }
  }
  // 401: an admin key is needed. One kept from earlier in this tab is tried.
  const kept = session.key;
  if (kept) {
    try {
      info = await api.info(kept);
      enterShell(info, true);
      return;
    } catch {
      session.clear();
    }
  }
  signInForm();
}

boot().catch((e) => {
  gate(h('h1', { id: 'gate-title', class: 'gate-title' }, 'The console failed to start'), h('p', { role: 'alert' }, String(e?.message || e)));
});
