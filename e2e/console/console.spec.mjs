// Drives Parley's web console in a real headless Chromium, as an operator
// would: sign-in, the overview, keys (create, edit, a bad value, revoke),
// usage with its CSV export, models and routes, try-it, the music tasks,
// keyboard navigation, and an open (keyless, loopback) gateway. A key made
// in the console is used through the official OpenAI SDK, seen in the
// overview and the usage, revoked, and refused. Then a fleet: what one
// replica serves shows in the other's console, and a key made in one
// console works through the other replica. A plain Node script: it exits
// non-zero on the first failure, saying what failed.
//
//   PARLEY_URL        a gateway with admin keys and some traffic in its ledger
//   PARLEY_ADMIN_KEY  one of its admin keys
//   PARLEY_OPEN_URL   a gateway with no keys on loopback (optional: its check
//                     is skipped, saying so, when unset)
//   PARLEY_OFF_URL    a gateway with client keys and no admin keys (optional,
//                     likewise)
//   PARLEY_TASKS      ids of music tasks the gateway has finished, comma-
//                     separated (optional: without them the tasks page is
//                     checked against whatever the admin API lists)
//   PARLEY_FLEET_A    two replicas of one fleet (one database), both with
//   PARLEY_FLEET_B    the admin key PARLEY_ADMIN_KEY and a model "m"
//                     (optional: the fleet's steps are skipped, saying so,
//                     when unset)
//   PARLEY_FLEET_KEY  a client key of the fleet's configuration, and its
//   PARLEY_FLEET_KEY_NAME  name (default alice)
//   CHROMIUM          the browser (default /usr/bin/chromium)
//
// Screenshots of each page go to a new temporary directory; their paths are
// printed.

import { chromium } from 'playwright-core';
import OpenAI from 'openai';
import { VERSION as OPENAI_VERSION } from 'openai/version';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BASE = (process.env.PARLEY_URL || '').replace(/\/$/, '');
const ADMIN_KEY = process.env.PARLEY_ADMIN_KEY || '';
const OPEN = (process.env.PARLEY_OPEN_URL || '').replace(/\/$/, '');
const OFF = (process.env.PARLEY_OFF_URL || '').replace(/\/$/, '');
const TASKS = (process.env.PARLEY_TASKS || '').split(',').filter(Boolean);
const FLEET_A = (process.env.PARLEY_FLEET_A || '').replace(/\/$/, '');
const FLEET_B = (process.env.PARLEY_FLEET_B || '').replace(/\/$/, '');
const FLEET_KEY = process.env.PARLEY_FLEET_KEY || '';
const FLEET_KEY_NAME = process.env.PARLEY_FLEET_KEY_NAME || 'alice';
const BUDGET = 300 * 1024; // first load, bytes transferred

if (!BASE || !ADMIN_KEY) {
  console.error('console.spec: set PARLEY_URL and PARLEY_ADMIN_KEY');
  process.exit(2);
}

// The Go test passes its artifact directory (kept with go test -artifacts).
const shots = process.env.PARLEY_SHOTS || mkdtempSync(join(tmpdir(), 'parley-console-'));
const screenshots = [];
let passed = 0;
let current = '';

class Failure extends Error {}
function expect(cond, message) {
  if (!cond) throw new Failure(message);
}

async function step(name, fn) {
  current = name;
  const t0 = Date.now();
  await fn();
  passed++;
  console.log(`ok   ${name} (${Date.now() - t0} ms)`);
}

async function shot(page, name) {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  screenshots.push(path);
}

/** Calls the admin API directly, to compare the console with it. */
function admin(method, path, body) {
  return adminAt(BASE, method, path, body);
}

/** Calls the admin API of the gateway at base. */
async function adminAt(base, method, path, body) {
  const res = await fetch(`${base}/admin/v1/${path}`, {
    method,
    headers: { Authorization: `Bearer ${ADMIN_KEY}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: res.status, json, text };
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/** The ledger's requests at base from the time from on, in all or by key. */
async function ledgerRequests(base, from, key) {
  const q = new URLSearchParams({ from: from.toISOString(), group_by: 'key' });
  if (key) q.set('key', key);
  const res = await adminAt(base, 'GET', `usage?${q}`);
  expect(res.status === 200, `GET ${base}/admin/v1/usage?${q}: ${res.status} ${res.text}`);
  return res.json.data.reduce((n, r) => n + r.requests, 0);
}

/** The start of the current month, UTC: where the usage page starts. */
function monthStart() {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** A chat completion through the official OpenAI SDK. */
function sdkChat(client, model, content) {
  return client.chat.completions.create({ model, messages: [{ role: 'user', content }] });
}

/**
 * Sends a chat completion through the SDK until fn(outcome) says done, for
 * up to ms: outcome is { reply } or { error }. Returns the last outcome and
 * how long it took.
 */
async function sdkUntil(client, model, content, ms, done) {
  const t0 = Date.now();
  for (;;) {
    let outcome;
    try {
      outcome = { reply: await sdkChat(client, model, content) };
    } catch (error) {
      outcome = { error };
    }
    if (done(outcome) || Date.now() - t0 > ms) return { ...outcome, ms: Date.now() - t0 };
    await sleep(200);
  }
}

/** What an SDK call's outcome was, for a failure's message. */
function described(o) {
  if (o.reply) return `answered ${JSON.stringify(o.reply.choices?.[0]?.message?.content)}`;
  const e = o.error;
  return `${e?.constructor?.name}: ${e?.status ?? ''} ${e?.message}`;
}

/** The overview's Requests card, a number. */
async function requestsCard(page) {
  const text = await page.locator('.kpi').first().locator('.kpi-value').innerText();
  return Number(text.replace(/[^\d]/g, ''));
}

/** The overview's "By key" bars: label and requests. */
function byKeyBars(page) {
  return page.locator('section.card', { has: page.getByRole('heading', { name: 'By key' }) }).locator('.bar-row')
    .evaluateAll((rows) => rows.map((r) => ({
      label: r.querySelector('.bar-label').textContent,
      value: Number(r.querySelector('.bar-value').firstChild.textContent.replace(/[^\d]/g, '')),
    })));
}

/**
 * Reloads the overview (it reads the ledger when shown) until its Requests
 * card says want and the "By key" bar of key says wantKey, for up to 5 s
 * (the ledger is flushed every 100ms).
 */
async function overviewShows(page, want, key, wantKey) {
  const t0 = Date.now();
  for (;;) {
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await page.locator('.kpi').first().waitFor();
    const n = await requestsCard(page);
    const bars = await byKeyBars(page);
    const bar = bars.find((b) => b.label === key);
    if (n === want && bar && bar.value === wantKey) return Date.now() - t0;
    expect(Date.now() - t0 < 5000, `the overview shows ${n} requests, want ${want}; by key ${JSON.stringify(bars)}, want ${key} with ${wantKey}`);
    await sleep(250);
    await page.reload();
  }
}

/** Every control on the page has an accessible name. */
async function controlsLabelled(page, where) {
  const bad = await page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea, button, a[href]')) {
      if (!el.getClientRects().length) continue; // not shown
      const named = (el.labels && el.labels.length) || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')
        || ((el.tagName === 'BUTTON' || el.tagName === 'A') && el.textContent.trim());
      if (!named) out.push(el.outerHTML.slice(0, 120));
    }
    return out;
  });
  expect(!bad.length, `${where}: controls without a label:\n  ${bad.join('\n  ')}`);
}

/** The focused element, and whether its focus is drawn. */
function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    const cs = getComputedStyle(el);
    const ring = (cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) >= 1) || cs.boxShadow !== 'none';
    // A radio or checkbox drawn by its label shows the focus there.
    const label = el.labels && el.labels[0];
    const labelRing = label ? getComputedStyle(label).outlineStyle !== 'none' : false;
    return {
      tag: el.tagName, text: (el.textContent || '').trim(), label: label ? label.textContent.trim() : el.getAttribute('aria-label') || '',
      name: el.getAttribute('name') || '', href: el.getAttribute('href') || '', ring: ring || labelRing,
    };
  });
}

const launch = () => chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});

function watch(page, errors) {
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  page.on('console', (m) => {
    // Error statuses are the API's answers (the probe's 401, a bad value's
    // 400), which the page shows; only script errors count here.
    if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
}

async function main() {
  const browser = await launch();
  const errors = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
    const page = await context.newPage();
    page.setDefaultTimeout(15000);
    watch(page, errors);

    // Bytes transferred by the first load: every response of the page,
    // headers and (encoded) body, from a cold cache through sign-in to the
    // overview at rest.
    const sizes = [];
    page.on('requestfinished', async (req) => {
      try {
        const s = await req.sizes();
        sizes.push({ url: req.url(), bytes: s.responseBodySize + s.responseHeadersSize });
      } catch { /* gone */ }
    });

    await step('the console asks for an admin key', async () => {
      const res = await page.goto(`${BASE}/console`);
      expect(res && res.ok(), `GET /console: ${res && res.status()}`);
      expect(page.url().startsWith(`${BASE}/console/`), `/console did not lead to /console/ but to ${page.url()}`);
      await page.getByLabel('Admin key').waitFor();
      expect(await page.getByRole('navigation', { name: 'Console' }).isHidden(), 'the navigation shows before sign-in');
      await controlsLabelled(page, 'sign-in');
      await shot(page, '01-sign-in');
    });

    await step('a wrong admin key is refused with a message', async () => {
      await page.getByLabel('Admin key').fill('not-the-admin-key');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.locator('.field-error[role=alert]');
      await alert.filter({ hasText: /not accepted/ }).waitFor();
      expect(await page.getByLabel('Admin key').getAttribute('aria-invalid') === 'true', 'the key field is not marked invalid');
      expect(!(await page.evaluate(() => Object.keys(sessionStorage).length)), 'a wrong key was kept in sessionStorage');
    });

    await step('sign-in with the admin key keeps it in sessionStorage only', async () => {
      await page.getByLabel('Admin key').fill(ADMIN_KEY);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Console' }).waitFor();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      const store = await page.evaluate(() => ({
        session: Object.values(sessionStorage), local: Object.keys(localStorage).length, cookie: document.cookie,
      }));
      expect(store.session.includes(ADMIN_KEY), 'the admin key is not in sessionStorage');
      expect(store.local === 0, 'the console wrote to localStorage');
      expect(store.cookie === '', 'the console set a cookie');
      expect(await page.getByRole('button', { name: 'Sign out' }).isVisible(), 'no Sign out button');
    });

    await step('the overview shows its cards, the chart and the live figures', async () => {
      await page.locator('.kpi').first().waitFor();
      const kpis = await page.locator('.kpi').evaluateAll((els) => els.map((e) => ({
        label: e.querySelector('.kpi-label').textContent, value: e.querySelector('.kpi-value').textContent,
      })));
      expect(kpis.map((k) => k.label).join(',') === 'Requests,Errors,Tokens,Cost', `cards: ${JSON.stringify(kpis)}`);
      const requests = Number(kpis[0].value.replace(/[^\d]/g, ''));
      expect(requests > 0, `the Requests card shows ${kpis[0].value}; the ledger has requests`);
      expect(/\$/.test(kpis[3].value), `the Cost card shows ${kpis[3].value}`);

      const svg = page.locator('svg.chart-svg');
      await svg.waitFor();
      const points = await svg.locator('.point').count();
      expect(points > 0, 'the chart has no data points');
      const sum = await svg.locator('.point[data-series=requests]').evaluateAll((els) => els.reduce((n, e) => n + Number(e.dataset.value), 0));
      expect(sum === requests, `the chart's requests add up to ${sum}, the card says ${requests}`);
      // The tooltip, on hover and on the keyboard.
      const box = await svg.locator('.point[data-series=requests]').last().boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + Math.max(1, box.height / 2));
      await page.locator('.chart-tip').filter({ hasText: 'Requests' }).waitFor();
      await page.mouse.move(0, 0);
      await svg.focus();
      await page.keyboard.press('Home');
      await page.locator('.chart-tip').filter({ hasText: 'Requests' }).waitFor();
      await page.keyboard.press('Escape');
      await page.locator('.chart-tip').waitFor({ state: 'hidden' });

      for (const dim of ['By model', 'By key', 'By upstream']) {
        const c = page.locator('section.card', { has: page.getByRole('heading', { name: dim }) });
        expect(await c.locator('.bar-row').count() > 0, `${dim} shows no bars`);
      }

      await page.locator('#live-requests').waitFor();
      await page.locator('#live-streams').waitFor();
      const health = page.locator('.card-live table');
      await health.waitFor();
      const heads = await health.locator('thead').innerText();
      for (const h of ['Upstream', 'Error rate', 'Latency', 'Time to first token', 'p50', 'p90', 'p99']) {
        expect(heads.includes(h), `the health table has no ${h} column`);
      }
      const stats = await admin('GET', 'stats');
      expect(stats.status === 200, `GET /admin/v1/stats: ${stats.status} ${stats.text}`);
      for (const u of stats.json.upstreams || []) {
        expect(await health.locator('tbody th', { hasText: u.name }).count() === 1, `the health table lacks upstream ${u.name}`);
      }
    });

    await step('the first load transfers under 300 KB', async () => {
      await page.waitForLoadState('networkidle');
      const total = sizes.reduce((n, s) => n + s.bytes, 0);
      const list = sizes.map((s) => `${String(s.bytes).padStart(7)}  ${new URL(s.url).pathname}`).join('\n      ');
      console.log(`     first load: ${sizes.length} responses, ${total} bytes (${(total / 1024).toFixed(1)} KB)\n      ${list}`);
      expect(total > 0 && total <= BUDGET, `the first load transferred ${total} bytes, over ${BUDGET}`);
    });

    await step('the live figures refresh every 5 s without reloading the page', async () => {
      await page.evaluate(() => { window.__sameDocument = true; });
      const before = await page.locator('.live-updated time').getAttribute('datetime');
      await page.waitForFunction((prev) => {
        const t = document.querySelector('.live-updated time');
        return t && t.getAttribute('datetime') !== prev;
      }, before, { timeout: 12000 });
      expect(await page.evaluate(() => window.__sameDocument === true), 'the page reloaded');
      await page.getByText('Last 30 days').click();
      await page.getByRole('heading', { name: 'Requests and errors per day' }).waitFor();
      // The chart draws when it is first laid out (a ResizeObserver), just
      // after the heading: wait for its points rather than count at once.
      const drawn = await page.locator('svg.chart-svg .point').first().waitFor({ timeout: 5000 }).then(() => true, () => false);
      expect(drawn && await page.locator('svg.chart-svg .point').count() > 0, 'the 30-day chart has no data points');
      await page.getByText('Last 24 hours').click();
      await page.getByRole('heading', { name: 'Requests and errors per hour' }).waitFor();
      await controlsLabelled(page, 'overview');
      await shot(page, '02-overview');
    });

    await step('the keyboard reaches the navigation, with the focus visible', async () => {
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await page.locator('.kpi').first().waitFor();
      const order = [];
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press('Tab');
        const f = await focused(page);
        order.push(f);
        expect(f.ring, `the focus on ${f.tag} "${f.text || f.label}" is not visible`);
      }
      const names = order.map((f) => f.text);
      expect(names[0] === 'Skip to content', `the first Tab reaches "${names[0]}", not the skip link`);
      const nav = names.slice(1, 8);
      expect(JSON.stringify(nav) === JSON.stringify(['Parley', 'Overview', 'Keys', 'Usage', 'Models & routes', 'Try it', 'Music tasks']),
        `Tab order through the rail: ${JSON.stringify(nav)}`);
      // Enter on a focused link navigates.
      for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+Tab');
      expect((await focused(page)).text === 'Keys', 'Shift+Tab did not go back to Keys');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
      expect(page.url().endsWith('#/keys'), `Enter on Keys led to ${page.url()}`);
      expect(await page.locator('.nav a[aria-current=page]').innerText() === 'Keys', 'the rail does not mark the page');
    });

    const name = `e2e-${Date.now().toString(36)}`;
    let secret = '';
    let sdk = null; // the OpenAI SDK with the new key
    let sdkModel = '';
    let sdkReply = null;
    let ledgerBefore = 0;
    await step('a key is created through the form, its secret shown once', async () => {
      await page.getByRole('button', { name: 'Create key' }).click();
      const dlg = page.getByRole('dialog');
      await dlg.waitFor();
      // Tab order through the form follows its fields.
      const nameBox = dlg.getByLabel('Name', { exact: true });
      expect(await nameBox.evaluate((el) => el === document.activeElement), 'the form does not start at Name');
      const seen = [];
      for (let i = 0; i < 4; i++) {
        await page.keyboard.press('Tab');
        const f = await focused(page);
        expect(f.ring, `the focus on the form's ${f.name} is not visible`);
        seen.push(f.name);
      }
      expect(JSON.stringify(seen) === JSON.stringify(['models', 'rpm', 'tpm', 'concurrent']), `Tab order in the form: ${seen}`);
      await controlsLabelled(page, 'the key form');
      await nameBox.fill(name);
      await dlg.getByLabel('Models').fill('m, echo');
      await dlg.getByLabel('Requests per minute').fill('30');
      await dlg.getByLabel('Amount').fill('5');
      await dlg.getByLabel('Counted in').selectOption('usd');
      await dlg.getByLabel('Per', { exact: true }).selectOption('month');
      await dlg.getByLabel('Team').fill('qa');
      await dlg.getByLabel('Owner').fill('console-e2e');
      await shot(page, '03-key-form');
      await dlg.getByRole('button', { name: 'Create key' }).click();

      const shown = page.getByRole('dialog', { name: `Key ${name} created` });
      await shown.waitFor();
      secret = await shown.locator('input.secret-value').inputValue();
      expect(secret.length >= 16, `the secret shown is "${secret}"`);
      expect(/you will not see it again/i.test(await shown.innerText()), 'the dialog does not say the secret is shown once');
      const copy = shown.getByRole('button', { name: 'Copy' });
      expect(await copy.isVisible(), 'no Copy button');
      await copy.click();
      await shown.locator('.copy-status', { hasText: 'Copied' }).waitFor();
      const clip = await page.evaluate(() => navigator.clipboard.readText().catch(() => null));
      expect(clip === null || clip === secret, 'Copy put something else on the clipboard');
      await shot(page, '04-key-secret');
      await shown.getByRole('button', { name: 'I have copied it' }).click();
      await shown.waitFor({ state: 'detached' });

      const row = page.locator(`tr[data-key="${name}"]`);
      await row.waitFor();
      const text = await row.innerText();
      expect(text.includes('30 req/min') && text.includes('team qa'), `the new key's row: ${text}`);
      expect(!(await page.content()).includes(secret), 'the secret is still in the page after the dialog closed');
      const keys = await admin('GET', 'keys');
      const made = keys.json.data.find((k) => k.name === name);
      expect(made && made.limits?.requests_per_minute === 30 && made.limits?.budget?.usd === 5 && made.metadata?.owner === 'console-e2e',
        `the key in the API: ${JSON.stringify(made)}`);
      // The secret works as a client key, through the official OpenAI SDK.
      const models = (await admin('GET', 'models')).json.data.filter((m) => !m.glob).map((m) => m.name);
      sdkModel = models.includes('m') ? 'm' : 'echo';
      ledgerBefore = await ledgerRequests(BASE, new Date(Date.now() - 24 * 3600e3));
      sdk = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: secret, maxRetries: 0 });
      try {
        sdkReply = await sdkChat(sdk, sdkModel, 'from the console test, through the SDK');
      } catch (e) {
        throw new Failure(`a request with the new key through the OpenAI SDK: ${described({ error: e })}`);
      }
      const u = sdkReply.usage;
      expect(sdkReply.choices?.[0]?.message?.content && u && u.prompt_tokens > 0 && u.completion_tokens > 0,
        `the SDK's reply: ${JSON.stringify(sdkReply)}`);
      console.log(`     the SDK (openai ${OPENAI_VERSION}) answered: ${JSON.stringify(sdkReply.choices[0].message.content)}, usage ${u.prompt_tokens} in, ${u.completion_tokens} out`);
    });

    await step('the SDK\'s request shows in the overview: one more request, by the new key', async () => {
      await page.getByRole('link', { name: 'Overview' }).click();
      const ms = await overviewShows(page, ledgerBefore + 1, name, 1);
      console.log(`     seen after ${ms} ms (${ledgerBefore} requests before)`);
      await page.waitForLoadState('networkidle');
      await shot(page, '04a-overview-new-key');
    });

    await step('the new key\'s row and its usage show the request with its tokens', async () => {
      const u = sdkReply.usage;
      await page.getByRole('link', { name: 'Keys' }).click();
      await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
      const row = page.locator(`tr[data-key="${name}"]`);
      await row.filter({ hasText: `${u.prompt_tokens + u.completion_tokens} tokens · 1 req` }).waitFor({ timeout: 5000 })
        .catch(async () => { throw new Failure(`the key's row does not show its request: ${await row.innerText()}`); });
      // The key's name leads to its usage.
      await row.getByRole('link', { name }).click();
      await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
      expect(await page.locator('.filter-grid').getByLabel('Key', { exact: true }).inputValue() === name, 'the usage page is not filtered by the key');
      const results = page.locator('.results-body table');
      await results.waitFor();
      const heads = await results.locator('thead th').allInnerTexts();
      const col = (label) => heads.indexOf(label) + 1;
      expect(col('Model') === 1 && col('Requests') > 0 && col('Input tokens') > 0 && col('Output tokens') > 0, `columns: ${heads}`);
      const rows = await results.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
      const num = (t) => Number(t.replace(/[^\d]/g, ''));
      expect(rows.length === 1, `the key's usage has ${rows.length} rows: ${JSON.stringify(rows)}`);
      const [r] = rows;
      expect(r[0] === sdkModel && num(r[col('Requests') - 1]) === 1 && num(r[col('Input tokens') - 1]) === u.prompt_tokens
        && num(r[col('Output tokens') - 1]) === u.completion_tokens,
      `the key's usage row ${JSON.stringify(r)}; the SDK sent 1 request to ${sdkModel}, ${u.prompt_tokens} tokens in, ${u.completion_tokens} out`);
      const api = await admin('GET', `usage?key=${encodeURIComponent(name)}&group_by=key&from=${monthStart().toISOString()}`);
      const a = api.json?.data?.[0];
      expect(api.json?.data?.length === 1 && a.requests === 1 && a.input_tokens === u.prompt_tokens && a.output_tokens === u.completion_tokens,
        `the key's usage in the API: ${api.text}`);
      await shot(page, '04b-usage-new-key');
      await page.getByRole('link', { name: 'Keys' }).click();
      await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
      await row.waitFor();
    });

    await step('a bad value shows the server\'s message next to its field', async () => {
      const direct = await admin('PATCH', `keys/${name}`, { limits: { requests_per_minute: -5 } });
      expect(direct.status === 400 && direct.json?.error?.field, `PATCH with -5: ${direct.status} ${direct.text}`);
      await page.getByRole('button', { name: `Edit ${name}` }).click();
      const dlg = page.getByRole('dialog');
      await dlg.waitFor();
      const rpm = dlg.getByLabel('Requests per minute');
      expect(await rpm.inputValue() === '30', 'the edit form does not hold the key\'s limit');
      await rpm.fill('-5');
      await dlg.getByRole('button', { name: 'Save changes' }).click();
      const err = dlg.locator('.field[data-field=rpm] .field-error');
      await err.filter({ hasText: /\S/ }).waitFor();
      const message = await err.innerText();
      expect(message === direct.json.error.message, `the field shows "${message}", the server said "${direct.json.error.message}"`);
      expect(await rpm.getAttribute('aria-invalid') === 'true', 'the field is not marked invalid');
      const described = await rpm.getAttribute('aria-describedby');
      expect(described.includes(await err.getAttribute('id')), 'the message is not tied to the field (aria-describedby)');
      expect(await rpm.evaluate((el) => el === document.activeElement), 'the focus did not move to the bad field');
      await shot(page, '05-key-field-error');
    });

    await step('a key\'s limits are edited', async () => {
      const dlg = page.getByRole('dialog');
      await dlg.getByLabel('Requests per minute').fill('120');
      await dlg.getByLabel('Tokens per minute').fill('50000');
      await dlg.getByRole('button', { name: 'Save changes' }).click();
      await dlg.waitFor({ state: 'detached' });
      const row = page.locator(`tr[data-key="${name}"]`);
      await row.filter({ hasText: '120 req/min' }).waitFor();
      const got = await admin('GET', `keys/${name}`);
      expect(got.json?.limits?.requests_per_minute === 120 && got.json?.limits?.tokens_per_minute === 50000
        && got.json?.limits?.budget?.usd === 5, `the key after the edit: ${got.text}`);
    });

    await step('a key is revoked after a confirmation naming it', async () => {
      const revoke = page.getByRole('button', { name: `Revoke ${name}` });
      await revoke.click();
      let dlg = page.getByRole('dialog');
      await dlg.waitFor();
      expect((await dlg.getByRole('heading').innerText()).includes(name), 'the confirmation does not name the key');
      await dlg.getByRole('button', { name: 'Cancel' }).click();
      await dlg.waitFor({ state: 'detached' });
      expect(!(await admin('GET', `keys/${name}`)).json.revoked_at, 'Cancel revoked the key');
      await revoke.click();
      dlg = page.getByRole('dialog');
      await shot(page, '06-key-revoke');
      await dlg.getByRole('button', { name: 'Revoke key' }).click();
      await dlg.waitFor({ state: 'detached' });
      const row = page.locator(`tr.revoked[data-key="${name}"]`);
      await row.waitFor();
      expect(/Revoked/.test(await row.innerText()), 'the revoked row does not say so');
      expect(await row.getByRole('button').count() === 0, 'a revoked key still has actions');
      expect((await admin('GET', `keys/${name}`)).json.revoked_at, 'the API does not have the key revoked');
      await controlsLabelled(page, 'keys');
      await shot(page, '07-keys');
    });

    await step('the revoked key is refused through the SDK with a 401', async () => {
      // Managed keys are re-read every 2 seconds: allow for it.
      const o = await sdkUntil(sdk, sdkModel, 'after the revocation', 5000, (x) => x.error);
      expect(o.error instanceof OpenAI.AuthenticationError && o.error.status === 401,
        `the SDK with the revoked key, ${o.ms} ms after: ${described(o)}; want OpenAI.AuthenticationError (401)`);
      console.log(`     refused after ${o.ms} ms: ${o.error.status} ${JSON.stringify(o.error.error)}`);
    });

    await step('the usage page filters and groups', async () => {
      await page.getByRole('link', { name: 'Usage' }).click();
      await page.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
      const results = page.locator('.results-body table');
      await results.waitFor();
      // The busiest model of the month, by the API.
      const byModel = await admin('GET', `usage?group_by=model&from=${new Date(Date.now() - 40 * 86400e3).toISOString().slice(0, 10)}`);
      expect(byModel.status === 200 && byModel.json.data.length, `usage by model: ${byModel.text}`);
      const top = byModel.json.data.sort((a, b) => b.requests - a.requests)[0];
      const filters = page.locator('.filter-grid');
      await filters.getByLabel('From', { exact: true }).fill(new Date(Date.now() - 40 * 86400e3).toISOString().slice(0, 10));
      await filters.getByLabel('Model', { exact: true }).fill(top.model);
      await page.locator('.group-by').getByText('Status', { exact: true }).click();
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForFunction(() => [...document.querySelectorAll('.results-body thead th')].some((th) => th.textContent === 'Status'));
      const heads = await results.locator('thead th').allInnerTexts();
      expect(heads[0] === 'Model' && heads[1] === 'Status', `columns: ${heads}`);
      const models = await results.locator('tbody tr > :first-child').allInnerTexts();
      expect(models.length && models.every((m) => m === top.model), `rows of other models: ${models}`);
      const reqs = await results.locator('tbody tr > :nth-child(3)').allInnerTexts();
      const sum = reqs.reduce((n, t) => n + Number(t.replace(/[^\d]/g, '')), 0);
      const total = Number((await results.locator('tfoot td').first().innerText()).replace(/[^\d]/g, ''));
      expect(sum === total && total === top.requests, `rows add up to ${sum}, the total says ${total}, the API ${top.requests}`);
      expect(page.url().includes('group_by=model%2Cstatus') || page.url().includes('group_by=model,status'), `the URL does not keep the query: ${page.url()}`);
    });

    await step('Export CSV downloads the query as CSV', async () => {
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Export CSV' }).click(),
      ]);
      const path = await download.path();
      const csv = readFileSync(path, 'utf8');
      const first = csv.split(/\r?\n/)[0];
      const want = 'model,status,requests,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,reasoning_tokens,cost_usd,duration_ms';
      expect(first === want, `the CSV's first line is "${first}", want "${want}"`);
      expect(/\.csv$/.test(download.suggestedFilename()), `the download is named ${download.suggestedFilename()}`);
      expect(csv.trim().split(/\r?\n/).length >= 2, 'the CSV has no rows');
      await controlsLabelled(page, 'usage');
      await shot(page, '08-usage');
    });

    await step('the models page lists each model\'s routes', async () => {
      await page.getByRole('link', { name: 'Models & routes' }).click();
      await page.getByRole('heading', { level: 1, name: 'Models & routes' }).waitFor();
      const api = (await admin('GET', 'models')).json;
      for (const m of api.data) {
        const card = page.locator(`article.model[data-model="${m.name}"]`);
        await card.waitFor();
        const rows = await card.locator('tbody tr').allInnerTexts();
        expect(rows.length === m.routes.length, `${m.name}: ${rows.length} routes shown, ${m.routes.length} in the API`);
        m.routes.forEach((r, i) => expect(rows[i].includes(r.upstream) && rows[i].includes(r.dialect), `${m.name} route ${i + 1}: ${rows[i]}`));
        if (m.context_window) expect((await card.innerText()).includes(new Intl.NumberFormat('en-US').format(m.context_window)), `${m.name}: no context window`);
        if (m.pricing) expect((await card.innerText()).includes('Input'), `${m.name}: no pricing`);
      }
      for (const u of api.upstreams) {
        expect(await page.locator('table').first().locator('tbody tr', { hasText: u.name }).count() >= 1, `upstream ${u.name} is not listed`);
      }
      await controlsLabelled(page, 'models');
      await shot(page, '09-models');
    });

    // Try it ---------------------------------------------------------------

    const tryResults = page.locator('.try-results');
    /** Sends the form and waits until the reply has ended (done, stopped, broken). */
    async function sendTry() {
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      await page.waitForFunction(() => ['done', 'stopped', 'broken'].includes(document.querySelector('.try-results')?.dataset.state));
    }

    await step('try it: a prompt to echo shows the client request, the answer and no upstream request', async () => {
      await page.getByRole('link', { name: 'Try it' }).click();
      await page.getByRole('heading', { level: 1, name: 'Try it' }).waitFor();
      // The suggestions are the configured exact names, no pattern.
      const exact = (await admin('GET', 'models')).json.data.filter((m) => !m.glob).map((m) => m.name).sort();
      await page.waitForFunction((n) => document.querySelectorAll('datalist option').length === n, exact.length);
      const offered = (await page.locator('datalist option').evaluateAll((os) => os.map((o) => o.value))).sort();
      expect(JSON.stringify(offered) === JSON.stringify(exact), `the model suggestions are ${offered}, the exact names ${exact}`);
      const dialects = await page.getByLabel('Client dialect').locator('option').evaluateAll((os) => os.map((o) => o.value));
      expect(dialects.join() === 'messages,generate_content,responses,chat_completions', `the dialects offered: ${dialects}`);

      const prompt = 'Echo this back to the console, please.';
      await page.getByLabel('Model', { exact: true }).fill('echo');
      await page.getByLabel('Client dialect').selectOption('messages');
      await page.getByLabel('Prompt', { exact: true }).fill(prompt);
      await sendTry();
      expect(await tryResults.getAttribute('data-state') === 'done', `the reply ended ${await tryResults.getAttribute('data-state')}`);
      const client = tryResults.locator('[data-side=client]');
      expect((await client.innerText()).includes('/v1/messages'), `the client request: ${await client.innerText()}`);
      const body = JSON.parse(await client.locator('pre').innerText());
      expect(body.model === 'echo' && body.stream === true && body.messages?.[0]?.content === prompt, `the client request's body: ${JSON.stringify(body)}`);
      const answer = tryResults.locator('.try-answer');
      expect(await answer.innerText() === prompt, `the answer is "${await answer.innerText()}", echo answers with "${prompt}"`);
      expect(await answer.getAttribute('aria-live') === 'polite', 'the answer is not a polite live region');
      const raw = tryResults.locator('.try-raw');
      expect(!(await raw.getAttribute('aria-live')), 'the raw stream is a live region');
      expect(/event: message_start[\s\S]*content_block_delta[\s\S]*message_stop/.test(await raw.innerText()), `the raw stream is not a messages stream:\n${await raw.innerText()}`);
      expect(await raw.evaluate((el) => getComputedStyle(el).fontFamily).then((f) => /mono/i.test(f)), 'the raw stream is not monospace');
      const upstream = await tryResults.locator('[data-side=upstream]').innerText();
      expect(/no upstream request/i.test(upstream), `the upstream side says: ${upstream}`);
      const reply = await tryResults.locator('[data-side=reply] .card-head').innerText();
      expect(/200/.test(reply) && /\bin\b.*ms/.test(reply), `the reply's status and duration: ${reply}`);
      await controlsLabelled(page, 'try it');
    });

    await step('try it: through the chat-completions upstream, both sides and the streamed reply', async () => {
      const prompt = 'Translate me, Parley.';
      await page.getByLabel('Model', { exact: true }).fill('m');
      await page.getByLabel('Prompt', { exact: true }).fill(prompt);
      await sendTry();
      expect(await tryResults.getAttribute('data-state') === 'done', `the reply ended ${await tryResults.getAttribute('data-state')}`);
      const ups = tryResults.locator('[data-side=upstream] li.try-upstream');
      expect(await ups.count() >= 1, 'no upstream request is shown');
      const path = await ups.first().getAttribute('data-path');
      expect(path.endsWith('/chat/completions'), `the upstream request went to ${path}`);
      expect((await ups.first().innerText()).includes(path), 'the upstream request is not labelled with its path');
      const body = JSON.parse(await ups.first().locator('pre').innerText());
      expect(Array.isArray(body.messages) && body.messages.at(-1).content === prompt && body.model === 'm',
        `the upstream request's body: ${JSON.stringify(body)}`);
      const answer = await tryResults.locator('.try-answer').innerText();
      expect(answer === 'heard 1 messages', `the answer is "${answer}", the upstream streamed "heard 1 messages"`);
      const raw = await tryResults.locator('.try-raw').innerText();
      expect((raw.match(/text_delta/g) || []).length >= 3, `the raw stream does not hold the deltas:\n${raw}`);
      expect(!(await page.content()).includes('sk-chat-upstream'), 'the page shows the upstream\'s key');
      await shot(page, '10-try-it');
    });

    await step('try it: Stop ends a reply under way', async () => {
      await page.getByLabel('Prompt', { exact: true }).fill('Answer slowly, please.');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const answer = tryResults.locator('.try-answer');
      await answer.filter({ hasText: 'heard' }).waitFor();
      const stop = page.getByRole('button', { name: 'Stop' });
      expect(await stop.isEnabled(), 'Stop is not enabled while the reply streams');
      await stop.click();
      await page.waitForFunction(() => document.querySelector('.try-results')?.dataset.state === 'stopped');
      await page.waitForTimeout(1500); // the next word would have come by now
      expect(!(await answer.innerText()).includes('messages'), `the answer went on after Stop: ${await answer.innerText()}`);
      expect(/Stopped/.test(await tryResults.locator('[data-side=reply] .card-head').innerText()), 'the reply does not say it was stopped');
      expect(await stop.isDisabled(), 'Stop is still enabled');
      expect(await page.evaluate(() => document.activeElement?.textContent === 'Send'), 'the focus was lost with the Stop button');
    });

    await step('try it: a bad dialect or an empty prompt shows the field error', async () => {
      const direct = await admin('POST', 'try', { model: 'echo', dialect: 'klingon', prompt: 'hi' });
      expect(direct.status === 400 && direct.json?.error?.field === 'dialect', `POST /try with a bad dialect: ${direct.status} ${direct.text}`);
      await page.getByLabel('Model', { exact: true }).fill('echo');
      await page.getByLabel('Prompt', { exact: true }).fill('hi');
      // A dialect this console offers that the gateway does not serve.
      const dialect = page.getByLabel('Client dialect');
      await dialect.evaluate((sel) => { sel.append(new Option('klingon', 'klingon')); sel.value = 'klingon'; });
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const err = page.locator('.field[data-field=dialect] .field-error');
      await err.filter({ hasText: /\S/ }).waitFor();
      expect(await err.innerText() === direct.json.error.message, `the field shows "${await err.innerText()}", the server said "${direct.json.error.message}"`);
      expect(await dialect.getAttribute('aria-invalid') === 'true', 'the dialect is not marked invalid');
      expect((await dialect.getAttribute('aria-describedby')).includes(await err.getAttribute('id')), 'the message is not tied to the dialect');
      expect(await dialect.evaluate((el) => el === document.activeElement), 'the focus did not move to the dialect');
      expect(await tryResults.isHidden(), 'an earlier reply is still shown beside the error');
      await shot(page, '11-try-field-error');
      await dialect.evaluate((sel) => { sel.querySelector('option[value=klingon]').remove(); sel.value = 'messages'; });

      const blank = await admin('POST', 'try', { model: 'echo', dialect: 'messages', prompt: ' ' });
      expect(blank.status === 400 && blank.json?.error?.field === 'prompt', `POST /try with a blank prompt: ${blank.status} ${blank.text}`);
      const prompt = page.getByLabel('Prompt', { exact: true });
      await prompt.fill('  ');
      await page.getByRole('button', { name: 'Send', exact: true }).click();
      const perr = page.locator('.field[data-field=prompt] .field-error');
      await perr.filter({ hasText: /\S/ }).waitFor();
      expect(await prompt.getAttribute('aria-invalid') === 'true', 'the prompt is not marked invalid');
      expect(await prompt.evaluate((el) => el === document.activeElement), 'the focus did not move to the prompt');
      expect(await err.innerText() === '' && !(await dialect.getAttribute('aria-invalid')), 'the dialect\'s error stayed');
    });

    await step('try it works from the keyboard', async () => {
      await page.locator('main h1').focus();
      const seen = [];
      for (let i = 0; i < 4; i++) {
        await page.keyboard.press('Tab');
        const f = await focused(page);
        expect(f.ring, `the focus on ${f.tag} ${f.name || f.text} is not visible`);
        seen.push(f.name || f.text);
      }
      expect(JSON.stringify(seen) === JSON.stringify(['model', 'dialect', 'prompt', 'Send']), `Tab order: ${seen}`);
      // Type a prompt and send it with Ctrl+Enter from the prompt.
      await page.getByLabel('Model', { exact: true }).focus();
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('echo');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Tab');
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('Typed, not clicked.');
      await page.keyboard.press('Control+Enter');
      await page.waitForFunction(() => document.querySelector('.try-results')?.dataset.state === 'done');
      const answer = await tryResults.locator('.try-answer').innerText();
      expect(answer === 'Typed, not clicked.', `the answer by keyboard: "${answer}"`);
      expect(page.url().includes('model=echo') && page.url().includes('dialect=messages'), `the URL does not keep the model and dialect: ${page.url()}`);
    });

    // Music tasks -----------------------------------------------------------

    await step('the music tasks page lists the tasks with their status and callback', async () => {
      let tasksCalls = 0;
      const count = (req) => { if (new URL(req.url()).pathname.endsWith('/admin/v1/tasks')) tasksCalls++; };
      page.on('request', count);
      await page.getByRole('link', { name: 'Music tasks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Music tasks' }).waitFor();
      const api = await admin('GET', 'tasks?limit=50');
      expect(api.status === 200 && Array.isArray(api.json?.data), `GET /admin/v1/tasks: ${api.status} ${api.text}`);
      const want = TASKS.length ? TASKS : api.json.data.map((t) => t.id);
      expect(want.length >= 2, `the gateway lists ${api.json.data.length} tasks; the test needs two`);
      await page.locator('tbody tr').first().waitFor();
      for (const id of want) {
        const t = api.json.data.find((x) => x.id === id);
        expect(t, `task ${id} is not in the admin API's list`);
        const row = page.locator(`tr[data-task="${id}"]`);
        await row.waitFor();
        const cells = await row.locator('th, td').allInnerTexts();
        expect(cells[0] === id, `the first cell is "${cells[0]}", not the id ${id}`);
        expect(cells[1] === t.owner && cells[2] === t.action, `${id}: owner and action "${cells[1]}", "${cells[2]}"; the API: ${t.owner}, ${t.action}`);
        expect(await row.getAttribute('data-status') === t.status, `${id}: status ${await row.getAttribute('data-status')}, the API ${t.status}`);
        expect(cells[3].includes({ success: 'Succeeded', fail: 'Failed', in_progress: 'In progress' }[t.status]), `${id}: the status cell "${cells[3]}"`);
        expect(cells[4].includes(`${t.progress}%`), `${id}: the progress cell "${cells[4]}", the API ${t.progress}`);
        expect(cells[8].includes(t.upstream), `${id}: the upstream cell "${cells[8]}", the API ${t.upstream}`);
        const cb = row.locator('td').nth(6);
        if (!t.callback) {
          expect(cells[7] === 'None', `${id}: no callback, the cell says "${cells[7]}"`);
          continue;
        }
        expect(await row.getAttribute('data-callback') === t.callback.state, `${id}: callback ${await row.getAttribute('data-callback')}, the API ${t.callback.state}`);
        expect(cells[7].includes({ done: 'Delivered', pending: 'Pending', abandoned: 'Abandoned' }[t.callback.state]) && cells[7].includes(t.callback.host),
          `${id}: the callback cell "${cells[7]}", the API ${JSON.stringify(t.callback)}`);
        const title = await cb.locator('[title]').first().getAttribute('title');
        const spoken = await cb.textContent();
        // A refused callback is tried again meanwhile: its count moves on.
        const attempts = Number((/(\d+) attempts?/.exec(title) || [])[1]);
        expect(t.callback.state === 'pending' ? attempts >= 1 : attempts === t.callback.attempts,
          `${id}: the callback's tooltip "${title}" does not count the attempts (${t.callback.attempts})`);
        if (t.callback.last_error) {
          expect(title.includes(t.callback.last_error) && spoken.includes(t.callback.last_error),
            `${id}: the last error "${t.callback.last_error}" is not in the tooltip "${title}" and the text "${spoken}"`);
        }
      }
      if (TASKS.length) {
        const states = new Set(TASKS.map((id) => api.json.data.find((x) => x.id === id)?.callback?.state || 'none'));
        expect(states.has('done') && states.has('pending'), `the callback states shown: ${[...states]}`);
      }
      const ids = await page.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.task));
      expect(JSON.stringify(ids) === JSON.stringify(api.json.data.map((t) => t.id)), `the rows' order ${ids}, the API's ${api.json.data.map((t) => t.id)}`);
      expect(!(await page.content()).includes('not-shown'), 'the page shows a callback address\'s query');
      await controlsLabelled(page, 'music tasks');
      await shot(page, '12-music-tasks');

      // Refreshed every 5 seconds while shown, and no more once left.
      const before = tasksCalls;
      await page.waitForRequest((req) => new URL(req.url()).pathname.endsWith('/admin/v1/tasks'), { timeout: 8000 });
      await page.locator(`tr[data-task="${want[0]}"]`).waitFor();
      expect(tasksCalls > before, 'the tasks were not refreshed');
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      const left = tasksCalls;
      await page.waitForTimeout(6000);
      expect(tasksCalls === left, `the tasks were fetched ${tasksCalls - left} times after leaving the page`);
      page.off('request', count);
    });

    await step('the dark theme follows the system', async () => {
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.getByRole('link', { name: 'Overview' }).click();
      await page.locator('svg.chart-svg').waitFor();
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(bg !== 'rgb(244, 245, 247)', `the dark theme kept the light background ${bg}`);
      await page.waitForLoadState('networkidle');
      await shot(page, '13-overview-dark');
      await page.emulateMedia({ colorScheme: 'light' });
    });

    await step('Sign out forgets the key', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Admin key').waitFor();
      expect(!(await page.evaluate(() => Object.keys(sessionStorage).length)), 'the key is still in sessionStorage');
      await page.reload();
      await page.getByLabel('Admin key').waitFor();
    });

    if (OPEN) {
      await step('an open gateway shows the console without sign-in', async () => {
        const ctx2 = await browser.newContext({ viewport: { width: 1360, height: 900 } });
        const p2 = await ctx2.newPage();
        watch(p2, errors);
        await p2.goto(`${OPEN}/console/`);
        await p2.getByRole('navigation', { name: 'Console' }).waitFor();
        await p2.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
        expect(await p2.getByLabel('Admin key').count() === 0, 'the open console asks for a key');
        expect(await p2.getByRole('button', { name: 'Sign out' }).isHidden(), 'the open console offers Sign out');
        await p2.locator('#live-requests').waitFor();
        await p2.waitForLoadState('networkidle');
        await shot(p2, '14-open-overview');
        // No music task has been submitted there.
        await p2.getByRole('link', { name: 'Music tasks' }).click();
        await p2.getByText('No music tasks yet').waitFor();
        await ctx2.close();
      });
    } else {
      console.log('skip an open gateway shows the console without sign-in (PARLEY_OPEN_URL is not set)');
    }

    if (OFF) {
      await step('a gateway without admin keys says to configure admin.keys', async () => {
        const ctx3 = await browser.newContext({ viewport: { width: 1360, height: 900 } });
        const p3 = await ctx3.newPage();
        watch(p3, errors);
        await p3.goto(`${OFF}/console/`);
        await p3.getByRole('heading', { level: 1, name: 'The admin API is off' }).waitFor();
        expect((await p3.locator('#gate').innerText()).includes('admin.keys'), 'the message does not name admin.keys');
        expect(await p3.getByLabel('Admin key').count() === 0, 'it asks for a key that cannot work');
        await shot(p3, '15-admin-off');
        await ctx3.close();
      });
    } else {
      console.log('skip a gateway without admin keys says to configure admin.keys (PARLEY_OFF_URL is not set)');
    }

    if (FLEET_A && FLEET_B && FLEET_KEY) {
      await fleet(browser, errors);
    } else {
      console.log('skip the fleet: one replica\'s requests in the other\'s console, a key made in one used through the other (PARLEY_FLEET_A, PARLEY_FLEET_B and PARLEY_FLEET_KEY are not set)');
    }

    await step('no script errors', async () => {
      expect(!errors.length, `the page logged errors:\n  ${errors.join('\n  ')}`);
    });
  } catch (e) {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages.length) {
      try { await shot(pages[pages.length - 1], 'failure'); } catch { /* closed */ }
    }
    throw e;
  } finally {
    await browser.close();
  }
}

/**
 * The fleet: requests through replica A show in replica B's console (one
 * ledger), and a key made in B's console works through A (one key store),
 * and once revoked there is refused by A.
 */
async function fleet(browser, errors) {
  const sent = 3;
  const day = new Date(Date.now() - 24 * 3600e3);
  let before = 0;
  let aliceBefore = 0;
  const clientName = FLEET_KEY_NAME;

  await step('fleet: requests through replica A with a client key', async () => {
    const info = await adminAt(FLEET_B, 'GET', 'info');
    expect(info.status === 200, `GET ${FLEET_B}/admin/v1/info: ${info.status} ${info.text}`);
    before = await ledgerRequests(FLEET_B, day);
    aliceBefore = await ledgerRequests(FLEET_B, day, FLEET_KEY_NAME);
    for (let i = 0; i < sent; i++) {
      const res = await fetch(`${FLEET_A}/v1/chat/completions`, {
        method: 'POST', headers: { Authorization: `Bearer ${FLEET_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `through replica A, ${i + 1}` }] }),
      });
      expect(res.status === 200, `request ${i + 1} through replica A: ${res.status} ${await res.text()}`);
    }
  });

  const ctx = await browser.newContext({ viewport: { width: 1360, height: 900 } });
  const p = await ctx.newPage();
  p.setDefaultTimeout(15000);
  watch(p, errors);
  // On a failure the context stays open, for main's screenshot of it.
  await step('fleet: replica B\'s console shows replica A\'s requests in its overview', async () => {
    await p.goto(`${FLEET_B}/console/`);
    await p.getByLabel('Admin key').fill(ADMIN_KEY);
    await p.getByRole('button', { name: 'Sign in' }).click();
    await p.getByRole('navigation', { name: 'Console' }).waitFor();
    const ms = await overviewShows(p, before + sent, clientName, aliceBefore + sent);
    console.log(`     replica B shows ${before + sent} requests (${sent} through replica A), seen after ${ms} ms`);
    await p.waitForLoadState('networkidle');
    await shot(p, '16-fleet-b-overview');
  });

  await step('fleet: replica B\'s usage page, filtered by the client key, counts them', async () => {
    const want = await ledgerRequests(FLEET_B, monthStart(), clientName);
    expect(want >= sent, `replica B's API counts ${want} requests of ${clientName} this month, fewer than the ${sent} sent`);
    await p.getByRole('link', { name: 'Usage' }).click();
    await p.getByRole('heading', { level: 1, name: 'Usage' }).waitFor();
    await p.locator('.filter-grid').getByLabel('Key', { exact: true }).fill(clientName);
    await p.locator('.group-by').getByText('Model', { exact: true }).click(); // off
    await p.locator('.group-by').getByText('Key', { exact: true }).click(); // on
    await p.getByRole('button', { name: 'Apply' }).click();
    const results = p.locator('.results-body table');
    await p.waitForFunction(() => [...document.querySelectorAll('.results-body thead th')].map((th) => th.textContent).join().startsWith('Key,Requests'));
    const rows = await results.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
    expect(rows.length === 1 && rows[0][0] === clientName && Number(rows[0][1].replace(/[^\d]/g, '')) === want,
      `replica B's usage of ${clientName}: ${JSON.stringify(rows)}, want ${want} requests`);
    await shot(p, '17-fleet-b-usage');
  });

  const name = `fleet-${Date.now().toString(36)}`;
  let client = null;
  await step('fleet: a key made in replica B\'s console works through replica A with the SDK', async () => {
    await p.getByRole('link', { name: 'Keys' }).click();
    await p.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    await p.getByRole('button', { name: 'Create key' }).click();
    const dlg = p.getByRole('dialog');
    await dlg.waitFor();
    await dlg.getByLabel('Name', { exact: true }).fill(name);
    await dlg.getByLabel('Models').fill('m');
    await dlg.getByRole('button', { name: 'Create key' }).click();
    const shown = p.getByRole('dialog', { name: `Key ${name} created` });
    await shown.waitFor();
    const secret = await shown.locator('input.secret-value').inputValue();
    expect(secret.length >= 16, `the secret shown is "${secret}"`);
    await shown.getByRole('button', { name: 'I have copied it' }).click();
    await shown.waitFor({ state: 'detached' });
    // Replica A reads the managed keys every 2 seconds.
    client = new OpenAI({ baseURL: `${FLEET_A}/v1`, apiKey: secret, maxRetries: 0 });
    const o = await sdkUntil(client, 'm', 'a key from replica B, through replica A', 5000,
      (x) => x.reply || !(x.error instanceof OpenAI.AuthenticationError));
    expect(o.reply && o.reply.choices?.[0]?.message?.content, `the SDK through replica A with the key made in B's console, after ${o.ms} ms: ${described(o)}`);
    console.log(`     replica A took the key after ${o.ms} ms: ${JSON.stringify(o.reply.choices[0].message.content)}`);
    // And B's console shows what the key did through A.
    const row = p.locator(`tr[data-key="${name}"]`);
    const t0 = Date.now();
    for (;;) {
      await row.waitFor();
      if ((await row.innerText()).includes('· 1 req')) break;
      expect(Date.now() - t0 < 5000, `replica B's row of ${name} does not show its request through A: ${await row.innerText()}`);
      await sleep(250);
      await p.reload();
      await p.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    }
    await shot(p, '18-fleet-b-keys');
  });

  await step('fleet: the key revoked in replica B\'s console is refused by replica A', async () => {
    await p.getByRole('button', { name: `Revoke ${name}` }).click();
    const dlg = p.getByRole('dialog');
    await dlg.getByRole('button', { name: 'Revoke key' }).click();
    await dlg.waitFor({ state: 'detached' });
    await p.locator(`tr.revoked[data-key="${name}"]`).waitFor();
    const o = await sdkUntil(client, 'm', 'after the revocation in B', 5000, (x) => x.error);
    expect(o.error instanceof OpenAI.AuthenticationError && o.error.status === 401,
      `the SDK through replica A with the key revoked in B's console, ${o.ms} ms after: ${described(o)}`);
    console.log(`     replica A refused it after ${o.ms} ms`);
  });
  await ctx.close();
}

try {
  await main();
  console.log(`\nscreenshots:\n  ${screenshots.join('\n  ')}`);
  console.log(`\nconsole e2e: all ${passed} steps passed`);
} catch (e) {
  console.log(`FAIL ${current}\n     ${e instanceof Failure ? e.message : e.stack || e}`);
  if (screenshots.length) console.log(`\nscreenshots:\n  ${screenshots.join('\n  ')}`);
  console.log(`\nconsole e2e: failed at "${current}" after ${passed} steps passed`);
  process.exit(1);
}
