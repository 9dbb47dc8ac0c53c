// Try it: one prompt sent to a model as a client of the chosen dialect
// sends it (POST /admin/v1/try), with what happened on both sides of
// Parley: the client request, each upstream request as it went, and the
// reply as it streamed, its answer text read from the dialect's events.

import { api, ApiError } from '../api.js';
import { h, fill, fmt, pageHead, nextId, announce } from '../ui.js';

const DIALECTS = [
  ['messages', 'messages — Anthropic Messages'],
  ['generate_content', 'generate_content — Google Gemini'],
  ['responses', 'responses — OpenAI Responses'],
  ['chat_completions', 'chat_completions — OpenAI Chat Completions'],
];

/** Whether a model name is a glob: routable names only, not patterns. */
const isGlob = (name) => /[*?[\]]/.test(name);

export function render(view, ctx) {
  let stopped = false;
  let running = null; // the AbortController of the request under way
  let runs = 0;

  const fields = {};
  function field(name, label, input, help) {
    const id = nextId(name);
    input.id = id;
    input.name = name;
    const err = h('p', { class: 'field-error', id: `${id}-err` });
    const helpEl = help ? h('p', { class: 'help', id: `${id}-help` }, help) : null;
    input.setAttribute('aria-describedby', [help ? `${id}-help` : '', `${id}-err`].join(' ').trim());
    const el = h('div', { class: 'field', dataset: { field: name } }, h('label', { for: id }, label), input, helpEl, err);
    fields[name] = { el, input, err, help: helpEl };
    return el;
  }

  const listId = nextId('models');
  const models = h('datalist', { id: listId });
  const modelInput = h('input', {
    type: 'text', list: listId, value: ctx.params.get('model') || '', placeholder: 'A model name', required: true,
    autocomplete: 'off', spellcheck: 'false', autocapitalize: 'off',
  });
  const wanted = ctx.params.get('dialect');
  const dialectSelect = h('select', null, DIALECTS.map(([v, t]) => h('option', { value: v, selected: v === wanted }, t)));
  const promptInput = h('textarea', {
    rows: '4', required: true, maxlength: String(32 << 10), placeholder: 'e.g. Say hello in three languages.', spellcheck: 'true',
    onkeydown: (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
    },
  });
  const summary = h('div', { class: 'form-alert', role: 'alert', tabindex: '-1', hidden: true });
  const sendBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Send');
  const stopBtn = h('button', { type: 'button', class: 'btn', disabled: true, onclick: () => stop(true) }, 'Stop');
  const state = h('span', { class: 'muted small try-state' });

  const form = h('form', { class: 'card form try-form', novalidate: true, 'aria-label': 'What to send', onsubmit: send },
    summary,
    h('div', { class: 'grid-fields try-fields' },
      field('model', 'Model', modelInput, 'A configured model name; the suggestions are the exact names.'),
      field('dialect', 'Client dialect', dialectSelect, 'The API the request is sent through, as its clients send it.')),
    field('prompt', 'Prompt', promptInput, 'Sent as one user message. Ctrl+Enter sends.'),
    models,
    h('div', { class: 'form-actions' }, sendBtn, stopBtn, state));

  // The three sides: the client request, the upstream requests, the reply.
  const clientBody = h('div');
  const upstreamCount = h('span', { class: 'count' }, '0');
  const upstreamBody = h('div');
  const replyHead = h('span', { class: 'try-reply-status' });
  const answer = h('div', { class: 'try-answer', 'aria-live': 'polite', 'aria-atomic': 'false' });
  const answerNote = h('p', { class: 'help', hidden: true });
  const answerError = h('div', { class: 'form-alert', hidden: true });
  const rawTitleId = nextId('raw');
  const rawType = h('span', { class: 'muted' });
  const raw = h('pre', { class: 'code try-raw', tabindex: '0', role: 'region', 'aria-labelledby': rawTitleId });
  const results = h('div', { class: 'try-results', hidden: true },
    h('section', { class: 'card', 'aria-labelledby': 'try-client-title', dataset: { side: 'client' } },
      h('h2', { class: 'card-title', id: 'try-client-title' }, 'Client request'),
      clientBody),
    h('section', { class: 'card', 'aria-labelledby': 'try-upstream-title', dataset: { side: 'upstream' } },
      h('h2', { class: 'card-title', id: 'try-upstream-title' }, 'Upstream requests ', upstreamCount),
      upstreamBody),
    h('section', { class: 'card', 'aria-labelledby': 'try-reply-title', dataset: { side: 'reply' } },
      h('div', { class: 'card-head' }, h('h2', { class: 'card-title', id: 'try-reply-title' }, 'Reply'), replyHead),
      h('h3', { class: 'subhead subhead-first' }, 'Answer'),
      answerError, answer, answerNote,
      h('h3', { class: 'subhead', id: rawTitleId }, 'Raw stream ', rawType),
      raw));

  fill(view,
    pageHead('Try it', 'Send one prompt to a model as a client of the chosen dialect would, and see the request on both sides of Parley and the reply as it streams.'),
    form, results);

  api.models().then((res) => {
    if (stopped) return;
    const all = res.data || [];
    const exact = all.filter((m) => !m.glob && !isGlob(m.name)).map((m) => m.name);
    const globs = all.filter((m) => m.glob || isGlob(m.name)).map((m) => m.name);
    fill(models, exact.map((n) => h('option', { value: n })));
    if (!modelInput.value && exact.length) modelInput.placeholder = `e.g. ${exact[0]}`;
    if (globs.length) {
      fill(fields.model.help, 'A configured model name; the suggestions are the exact names. For a pattern (',
        globs.map((g, i) => [i ? ', ' : '', h('code', null, g)]), ') type a name it matches.');
    }
  }).catch(() => { /* no suggestions: a name can still be typed */ });

  function clearErrors() {
    summary.hidden = true;
    fill(summary);
    for (const f of Object.values(fields)) {
      f.err.textContent = '';
      f.input.removeAttribute('aria-invalid');
    }
  }
  function showError(name, message) {
    const f = fields[name];
    if (!f) {
      fill(summary, name ? h('strong', null, `${name}: `) : null, message);
      summary.hidden = false;
      summary.focus();
      return;
    }
    f.err.textContent = message;
    f.input.setAttribute('aria-invalid', 'true');
    f.input.focus();
  }

  function busy(on) {
    stopBtn.disabled = !on;
    if (!on && document.activeElement === stopBtn) sendBtn.focus();
  }

  function stop(byUser) {
    if (!running) return;
    running.abort();
    running = null;
    if (byUser) busy(false);
  }

  async function send(e) {
    e.preventDefault();
    clearErrors();
    const model = modelInput.value.trim();
    const dialect = dialectSelect.value;
    const prompt = promptInput.value;
    if (!model) { showError('model', 'Enter a model name.'); return; }
    if (isGlob(model)) { showError('model', `“${model}” is a pattern. Type a model name it matches.`); return; }
    if (!prompt.trim()) { showError('prompt', 'Enter a prompt.'); return; }
    stop(false);
    const run = ++runs;
    const ctl = new AbortController();
    running = ctl;
    const t0 = performance.now();
    history.replaceState(null, '', `#/try?${new URLSearchParams({ model, dialect })}`);
    busy(true);
    state.textContent = 'Sending…';
    results.dataset.state = 'sending';

    let res;
    try {
      res = await api.try({ model, dialect, prompt }, ctl.signal);
    } catch (err) {
      if (run !== runs) return;
      running = null;
      busy(false);
      results.dataset.state = err.name === 'AbortError' ? 'stopped' : 'refused';
      if (err.name === 'AbortError') { state.textContent = 'Stopped.'; return; }
      state.textContent = '';
      results.hidden = true;
      if (err instanceof ApiError && err.status === 401 && !err.field) {
        showError('', 'The admin key was not accepted.');
      } else {
        showError(err instanceof ApiError ? err.field : '', err.message);
      }
      return;
    }
    if (run !== runs) return;

    const view2 = resetResults();
    results.hidden = false;
    state.textContent = 'Streaming…';
    results.dataset.state = 'streaming';
    const out = replyReader(dialect, view2);
    const outer = sseReader((name, data) => {
      let v;
      try { v = JSON.parse(data); } catch { return; }
      out.event(name, v);
    });
    let ended = 'done';
    try {
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (run !== runs) { reader.cancel().catch(() => {}); return; }
        outer.push(value);
      }
      outer.end();
    } catch (err) {
      ended = err.name === 'AbortError' ? 'stopped' : 'broken';
      if (ended === 'broken') out.broken(err.message);
    }
    if (run !== runs) return;
    running = null;
    busy(false);
    const took = performance.now() - t0;
    const [summaryText, final] = out.finish(ended, took);
    state.textContent = summaryText;
    results.dataset.state = final;
    announce(summaryText);
  }

  /** Empties the three sides for a new request; returns their parts. */
  function resetResults() {
    fill(clientBody, h('p', { class: 'loading' }, 'Waiting…'));
    fill(upstreamBody, h('p', { class: 'loading' }, 'Waiting…'));
    upstreamCount.textContent = '0';
    fill(replyHead);
    fill(answer);
    answerNote.hidden = true;
    answerError.hidden = true;
    fill(answerError);
    fill(raw);
    fill(rawType);
    return { clientBody, upstreamBody, upstreamCount, replyHead, answer, answerNote, answerError, raw, rawType };
  }

  return () => {
    stopped = true;
    runs++;
    if (running) running.abort();
    running = null;
  };
}

// Reading the reply ---------------------------------------------------------

/**
 * Reads server-sent events from text as it comes: onEvent(name, data) for
 * each event with data.
 */
function sseReader(onEvent) {
  let buf = '';
  const dispatch = (block) => {
    let name = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const key = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (key === 'event') name = value;
      else if (key === 'data') data.push(value);
    }
    if (data.length) onEvent(name, data.join('\n'));
  };
  return {
    push(text) {
      buf = (buf + text).replace(/\r\n/g, '\n');
      let at;
      while ((at = buf.indexOf('\n\n')) >= 0) {
        dispatch(buf.slice(0, at));
        buf = buf.slice(at + 2);
      }
    },
    end() {
      if (buf.trim()) dispatch(buf);
      buf = '';
    },
  };
}

// The answer's text in each dialect's stream events (the first choice or
// candidate only), and the error an event carries.
const first = (i) => (i ?? 0) === 0;
const TEXT = {
  messages: (e) => (e.type === 'content_block_delta' && e.delta?.type === 'text_delta' ? e.delta.text : ''),
  chat_completions: (e) => (e.choices || []).filter((c) => first(c.index)).map((c) => c.delta?.content || '').join(''),
  responses: (e) => (e.type === 'response.output_text.delta' ? e.delta : ''),
  generate_content: (e) => (e.candidates || []).filter((c) => first(c.index))
    .flatMap((c) => c.content?.parts || []).filter((p) => !p.thought).map((p) => p.text || '').join(''),
};

function eventError(e) {
  if (!e || typeof e !== 'object') return '';
  if (e.type === 'response.failed') return e.response?.error?.message || 'The response failed.';
  if (e.type === 'error') return e.error?.message || e.message || 'An error event.';
  if (e.error && !e.choices && !e.candidates) return e.error.message || JSON.stringify(e.error);
  return '';
}

const pretty = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** Shows the try-it events in the three sides as they come. */
function replyReader(dialect, ui) {
  const pick = TEXT[dialect];
  let status = 0;
  let contentType = '';
  let done = null;
  let upstreams = 0;
  let text = '';
  let readable = true; // every event of the reply could be read
  let error = '';
  let rawText = '';
  const inner = sseReader((name, data) => {
    if (data === '[DONE]') return;
    let e;
    try { e = JSON.parse(data); } catch { readable = false; return; }
    const bad = eventError(e);
    if (bad) { error = bad; return; }
    let piece = '';
    try { piece = pick ? pick(e) : ''; } catch { readable = false; }
    if (piece) {
      text += piece;
      ui.answer.append(piece);
    }
  });

  function upstreamItem(u) {
    upstreams++;
    if (upstreams === 1) fill(ui.upstreamBody, h('ol', { class: 'try-upstreams' }));
    ui.upstreamCount.textContent = String(upstreams);
    const path = String(u.path || '');
    ui.upstreamBody.firstChild.append(h('li', { class: 'try-upstream', dataset: { path } },
      h('h3', { class: 'try-label' }, h('span', { class: 'muted' }, `${upstreams}. `), h('span', { class: 'mono break' }, path)),
      h('pre', { class: 'code try-json', tabindex: '0' }, pretty(u.body))));
  }

  return {
    event(name, v) {
      switch (name) {
        case 'request':
          fill(ui.clientBody,
            h('p', { class: 'try-label' }, h('span', { class: 'badge' }, v.method || 'POST'), ' ', h('span', { class: 'mono break' }, v.path || '')),
            h('pre', { class: 'code try-json', tabindex: '0' }, pretty(v.body)));
          break;
        case 'upstream_request':
          upstreamItem(v);
          break;
        case 'reply':
          status = Number(v.status) || 0;
          contentType = String(v.content_type || '');
          fill(ui.replyHead, statusPill(status));
          fill(ui.rawType, contentType ? `· ${contentType}` : '');
          break;
        case 'chunk': {
          const s = typeof v === 'string' ? v : JSON.stringify(v);
          rawText += s;
          const pinned = ui.raw.scrollHeight - ui.raw.scrollTop - ui.raw.clientHeight < 24;
          ui.raw.append(s);
          if (pinned) ui.raw.scrollTop = ui.raw.scrollHeight;
          if (status < 400 && /event-stream/.test(contentType)) inner.push(s);
          break;
        }
        case 'done':
          done = v;
          if (v.status) status = Number(v.status);
          break;
        default:
      }
    },
    broken(message) {
      error = `The stream broke off: ${message}`;
    },
    /** Ends the reply: its summary and how it ended (done, stopped, broken). */
    finish(ended, tookMs) {
      inner.end();
      if (!upstreams) {
        let why = 'No upstream request was made.';
        if (ended === 'done' && done) {
          why = status >= 400
            ? 'No upstream request: Parley answered the request itself (see the reply).'
            : 'No upstream request: the model answered within Parley, as the built-in echo model does.';
        }
        fill(ui.upstreamBody, h('p', { class: 'empty try-none' }, why));
      }
      if (status >= 400 && !error) {
        try {
          const body = JSON.parse(rawText);
          error = body?.error?.message || (typeof body?.error === 'string' ? body.error : '') || '';
        } catch { /* not JSON */ }
        if (!error) error = `The reply has status ${status}.`;
      }
      if (!ui.raw.textContent) ui.raw.append(h('span', { class: 'muted' }, '(nothing)'));
      if (error) {
        fill(ui.answerError, h('strong', null, status >= 400 ? `${status}: ` : 'Error: '), error);
        ui.answerError.hidden = false;
      }
      if (!text && !error) {
        ui.answerNote.textContent = readable && status && status < 400
          ? 'The reply has no answer text.'
          : 'The answer’s text could not be read from this reply: see the raw stream.';
        ui.answerNote.hidden = false;
      } else if (text && !readable) {
        ui.answerNote.textContent = 'Some of the reply could not be read: see the raw stream.';
        ui.answerNote.hidden = false;
      }
      const took = done?.duration_ms ?? tookMs;
      if (ended === 'stopped') {
        fill(ui.replyHead, h('span', { class: 'pill pill-neutral' }, 'Stopped'), h('span', { class: 'muted small' }, ` after ${fmt.ms(tookMs)}`));
        return [`Stopped after ${fmt.ms(tookMs)}.`, 'stopped'];
      }
      if (ended === 'broken' || !done) {
        fill(ui.replyHead, h('span', { class: 'pill pill-bad' }, status ? `${status} · cut off` : 'Cut off'));
        return ['The reply was cut off.', 'broken'];
      }
      fill(ui.replyHead, statusPill(status), h('span', { class: 'muted small try-took' }, ` in ${fmt.ms(took)}`));
      return [`Done: status ${status} in ${fmt.ms(took)}.`, 'done'];
    },
  };
}

function statusPill(status) {
  const level = status >= 400 ? 'bad' : status >= 200 && status < 300 ? 'ok' : 'neutral';
  return h('span', { class: `pill pill-${level}`, title: 'The reply’s HTTP status' }, h('span', { class: 'sr-only' }, 'Status '), String(status));
}
