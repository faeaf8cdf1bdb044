// catsrv's admin dashboard: sign in with a token, pick a CAT and a range,
// read the charts, click to filter, read and export the chat log. All
// state is in the URL; all data comes from the public API.
import * as api from './api.js';
import * as st from './state.js';
import { bars, daily, esc, prefetchCharts } from './charts.js';
import { PAGE, initLists, labelOf, renderLists, resetLists } from './lists.js';
import { initLog, loadLog } from './chatlog.js';
import { fetchBefore, fetchHead, pendingChanges, showChanges, showHead } from './usage.js';
import { idle, nextTask } from './lazy.js';
import { initReview, loadReview } from './review.js';
import { initThread } from './thread.js';
import * as fmt from './fmt.js';

const $ = (id) => document.getElementById(id);
let s = st.read();
// keeps holds each CAT's analytics.retention_days (0: forever), from /get_cats.
let keeps = new Map();
let data = null;
let loadSeq = 0;

function setBusy(state, message) {
  document.body.dataset.state = state;
  $('content').setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
  $('status').textContent = message || '';
}

function showError(message) {
  const el = $('error');
  el.textContent = message;
  el.hidden = !message;
}

// fail shows an API failure; a refused token sends the admin back to
// sign-in with the API's message.
export function fail(e) {
  if (e.status === 401 || e.status === 403) {
    api.clearToken();
    showSignin('The server refused the token: ' + e.message);
    return;
  }
  setBusy('error', '');
  showError(e.message);
}

async function showSignin(message) {
  $('app').hidden = true;
  $('signout').hidden = true;
  $('signin').hidden = false;
  const err = $('signin-error');
  err.textContent = message || '';
  err.hidden = !message;
  $('token').focus();
  // PROVIDER LOGIN: shown only when the server offers providers. Each
  // provider's login starts with a same-origin POST to its start route
  // (POST /api/v1/auth/<provider>), which redirects to the provider.
  const list = await api.providers();
  const ul = $('provider-list');
  ul.innerHTML = '';
  for (const p of list) {
    const name = typeof p === 'string' ? p : p.name || p.id;
    if (typeof name !== 'string' || !/^[a-z0-9_-]+$/i.test(name)) continue;
    const start = typeof p === 'object' && typeof p.start_url === 'string' && p.start_url.startsWith('/') ? p.start_url : '/api/v1/auth/' + name;
    const li = document.createElement('li');
    const form = document.createElement('form');
    form.method = 'post';
    form.action = start;
    const button = document.createElement('button');
    button.type = 'submit';
    button.textContent = 'Sign in with ' + ((typeof p === 'object' && (p.display_name || p.label)) || name);
    form.appendChild(button);
    // The start route answers JSON with the provider's URL: fetch it and
    // go there, rather than let the form show the JSON.
    form.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        window.location.assign(await api.startLogin(start));
      } catch (e) {
        showSignin('Sign-in could not start: ' + e.message);
      }
    });
    li.appendChild(form);
    ul.appendChild(li);
  }
  $('providers').hidden = ul.children.length === 0;
}

async function showApp() {
  $('signin').hidden = true;
  $('app').hidden = false;
  $('signout').hidden = false;
  setBusy('loading', 'Loading CATs…');
  showError('');
  let cats;
  try {
    cats = (await api.getJSON('/get_cats')).cats;
  } catch (e) {
    fail(e);
    return;
  }
  const sel = $('cat');
  sel.innerHTML = cats.map((c) => '<option value="' + esc(c.name) + '">' + esc(c.name) + '</option>').join('');
  if (!cats.length) {
    // An admin sees every CAT: an empty list means the token is not
    // an admin's (or has expired) and only public CATs were asked for.
    api.clearToken();
    showSignin('The server lists no CATs for this token: is it a valid admin token?');
    return;
  }
  if (!cats.some((c) => c.name === s.cat)) s.cat = cats[0].name;
  keeps = new Map(cats.map((c) => [c.name, c.retention_days || 0]));
  st.write(s, true);
  syncControls();
  load();
}

function syncControls() {
  $('cat').value = s.cat;
  // A range older than the CAT keeps (analytics.retention_days) is not
  // offered; "All" is then what is kept.
  s.keep = keeps.get(s.cat) || 0;
  if (!st.allowed(s.range, s.keep)) s.range = 'all';
  document.querySelectorAll('[data-range]').forEach((b) => {
    b.disabled = !st.allowed(b.dataset.range, s.keep);
    b.title = b.disabled ? 'This CAT keeps interactions for ' + (s.keep + 1) + ' days' : '';
  });
  document.querySelectorAll('[data-range]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.range === s.range)));
  document.querySelectorAll('[data-source]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.source === s.source)));
  const d = st.span(s);
  // The pickers show the range in effect, whichever way it was chosen,
  // and offer only the days the CAT keeps.
  const first = st.earliest(s.keep);
  for (const id of ['from', 'to']) {
    $(id).min = first;
    $(id).max = new Date().toISOString().slice(0, 10);
  }
  $('from').value = d.startDate || '';
  $('to').value = d.startDate ? prevDay(d.endDate) : '';
  $('custom-range').classList.toggle('active', s.range === 'custom');
  // The pickers show the days; the label says what they are.
  $('range-label').textContent = (d.startDate ? 'UTC days' : 'all time') + (s.keep && s.range === 'all' ? ', all this CAT keeps' : '');
}

// pickDates applies the custom range once both days are set and in order.
function pickDates() {
  const from = $('from').value;
  const to = $('to').value;
  if (!st.isDay(from) || !st.isDay(to)) return;
  if (from > to) {
    $('range-label').textContent = 'The first day must not be after the last.';
    return;
  }
  update((x) => { x.range = 'custom'; x.from = from; x.to = to; });
}

function prevDay(day) { return new Date(Date.parse(day + 'T00:00:00Z') - 86400000).toISOString().slice(0, 10); }

// update applies a change of state: a new URL entry, then a reload.
function update(change) {
  change(s);
  st.write(s, false);
  syncControls();
  resetLists();
  load();
}

export function addFilter(f, key) {
  if (s.filters[f].includes(key)) return;
  update((x) => x.filters[f].push(key));
}

function removeFilter(f, key) {
  update((x) => { x.filters[f] = x.filters[f].filter((v) => v !== key); });
}

function chipLabel(f, key) {
  const shown = labelOf(f, key);
  if (shown) return shown;
  if (data && f === 'questionid') {
    const q = data.questions.find((x) => x.id === key);
    if (q) return q.question;
  }
  if (data && f === 'answerid') {
    const a = data.answers.find((x) => x.id === key);
    if (a) return a.answers;
  }
  return key;
}

const FILTER_NAMES = { topic: 'topic', model: 'model', persona: 'persona', questionid: 'question', answerid: 'answer' };

function renderChips() {
  const box = $('chips');
  box.innerHTML = '';
  for (const f of st.FILTERS) {
    for (const key of s.filters[f]) {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'chip';
      const label = chipLabel(f, key);
      b.textContent = FILTER_NAMES[f] + ': ' + (label.length > 50 ? label.slice(0, 49) + '…' : label) + ' ✕';
      b.setAttribute('aria-label', 'Remove filter ' + FILTER_NAMES[f] + ' ' + label);
      b.dataset.filter = f;
      b.dataset.value = key;
      b.addEventListener('click', () => removeFilter(f, key));
      box.appendChild(b);
    }
  }
  box.hidden = box.children.length === 0;
}

function fillDays(days) {
  const d = st.span(s);
  let start = d.startDate;
  let end = d.endDate;
  if (!start) {
    if (!days.length) return [];
    start = days[0].date;
    end = st.nextDay(days[days.length - 1].date);
  }
  const counts = new Map(days.map((x) => [x.date, x.count]));
  return st.dayList(start, end).map((date) => ({ date, count: counts.get(date) || 0 }));
}

async function load() {
  const seq = ++loadSeq;
  setBusy('loading', 'Loading…');
  showError('');
  renderChips();
  const params = st.apiParams(s);
  const route = s.source === 'raw' ? '/all' : '/all_warehouse';
  const span = st.span(s);
  const prev = st.previous(span, s.keep);
  const n = st.days(span);
  // Until the previous period's figures come, each change says what it
  // will compare with.
  pendingChanges(prev ? '… vs ' + fmt.period(n) : '');
  if (!prev && span.startDate) $('total-change').textContent = fmt.period(n) + ' not kept';
  const started = performance.now();
  let result;
  let days;
  // One page of each list, with their totals: the lists are paged and
  // searched on the server (lists.js). Asked first, and the only answers
  // the charts wait for.
  const first = new URLSearchParams(params);
  first.set('limit', String(PAGE));
  first.set('offset', '0');
  const main = Promise.all([api.getJSON(route, first), api.getJSON('/daily_counts', params)]);
  // The usage and feedback figures fill their places, which keep their
  // size, when they come.
  const head = fetchHead(params);
  try {
    [result, days] = await main;
  } catch (e) {
    if (seq === loadSeq) fail(e);
    return;
  }
  if (seq !== loadSeq) return;
  const roundTrip = performance.now() - started;
  data = result;
  document.body.dataset.query = params.toString();
  $('total').textContent = fmt.count(result.total_interactions);
  $('total').dataset.value = String(result.total_interactions);
  const figures = head.then((h) => {
    if (seq !== loadSeq) return null;
    const refused = showHead(h, params, s);
    if (refused) { fail(refused); return null; }
    return h;
  });
  $('perf').textContent = s.source === 'raw'
    ? 'n/a (' + roundTrip.toFixed(0) + ' ms round trip)'
    : result.performance_ms.toFixed(2) + ' ms';
  $('source').textContent = s.source === 'raw' ? 'raw log (/all)' : result.data_source + ' (/all_warehouse)';
  // Each chart's table and summary in a task of its own: no long task
  // holds the page between the data and the lists. The charts themselves
  // are drawn when they come into view (charts.js).
  const draws = [
    () => bars('topic', result.topic_counts.map((t) => ({ key: t.topic, label: t.topic, count: t.count, pct: t.percentage })),
      { what: 'Topic', active: s.filters.topic, onPick: (k) => addFilter('topic', k) }),
    () => bars('model', result.model_counts.map((m) => ({ key: m.membership, label: m.membership, count: m.count })),
      { what: 'Model', active: s.filters.model, onPick: (k) => addFilter('model', k) }),
    () => bars('persona', result.persona_counts.map((p) => ({ key: p.persona, label: p.persona, count: p.count })),
      { what: 'Persona', active: s.filters.persona, onPick: (k) => addFilter('persona', k) }),
    () => daily(fillDays(days.daily_counts)),
    () => { renderLists(result, s, params); renderChips(); },
  ];
  for (const draw of draws) {
    draw();
    await nextTask();
    if (seq !== loadSeq) return;
  }
  loadReview(params);
  const logged = loadLog(params);
  // The previous period, for the figures' changes, once the first view
  // is drawn and the browser idle: the first view does not wait for it.
  await idle();
  if (seq !== loadSeq) return;
  prefetchCharts();
  const prevTotal = prev ? api.getJSON(route, st.withDates(new URLSearchParams([...params, ['limit', '1']]), prev)).catch(() => null) : null;
  const before = prev ? fetchBefore(params, prev) : null;
  const changes = Promise.all([prevTotal, before, figures]).then(([total, b, h]) => {
    if (seq !== loadSeq || !h) return false;
    $('total-change').textContent = total ? fmt.change(result.total_interactions, total.total_interactions, n) : (!prev && span.startDate ? fmt.period(n) + ' not kept' : '');
    $('total-change').dataset.prev = total ? String(total.total_interactions) : '';
    showChanges(h, b, n);
    return true;
  });
  const [shownLog, shown] = await Promise.all([logged, changes]);
  if (!shownLog || !shown || seq !== loadSeq) return;
  if (result.total_interactions === 0) {
    setBusy('empty', 'No interactions in this range.');
  } else {
    setBusy('ready', fmt.count(result.total_interactions) + ' interactions.');
  }
}

function init() {
  $('token-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const t = $('token').value.trim();
    if (!t) return;
    api.setToken(t);
    $('token').value = '';
    showApp();
  });
  $('signout').addEventListener('click', async () => {
    const viaCookie = !api.token();
    api.clearToken();
    if (viaCookie) await api.logout();
    showSignin('');
  });
  $('cat').addEventListener('change', () => update((x) => {
    x.cat = $('cat').value;
    for (const f of st.FILTERS) x.filters[f] = [];
  }));
  document.querySelectorAll('[data-range]').forEach((b) => b.addEventListener('click', () => update((x) => { x.range = b.dataset.range; })));
  document.querySelectorAll('[data-source]').forEach((b) => b.addEventListener('click', () => update((x) => { x.source = b.dataset.source; })));
  $('from').addEventListener('change', pickDates);
  $('to').addEventListener('change', pickDates);
  $('controls').addEventListener('submit', (e) => e.preventDefault());
  window.addEventListener('popstate', () => {
    s = st.read();
    syncControls();
    resetLists();
    load();
  });
  initLists((f, key) => addFilter(f, key));
  initLog(fail);
  initReview(fail);
  initThread();
  if (api.token()) showApp();
  else signinOrSession();
}

// signinOrSession opens the dashboard for a browser that came back from a
// provider login (it holds the session cookie), or shows sign-in.
async function signinOrSession() {
  if (await api.cookieSession()) showApp();
  else showSignin('');
}

init();
