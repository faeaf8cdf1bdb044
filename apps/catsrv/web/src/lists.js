// The top questions and answers: paged tables searched on the server,
// whose rows add their question or answer as a filter. The first page of
// each comes with the analytics result (limit, offset=0); other pages and
// searches ask /questions or /answers for one page (offset, limit, q).
import { esc } from './charts.js';
import * as api from './api.js';

export const PAGE = 10;
const DEBOUNCE_MS = 250;
const kinds = {
  question: { filter: 'questionid', route: '/questions', key: 'questions', items: [], total: 0, page: 0, q: '', seq: 0, timer: 0, text: (x) => x.question },
  answer: { filter: 'answerid', route: '/answers', key: 'answers', items: [], total: 0, page: 0, q: '', seq: 0, timer: 0, text: (x) => x.answers },
};
let pick = () => {};
let active = { questionid: [], answerid: [] };
let base = new URLSearchParams();
// labels keeps the text of every question and answer shown, for the
// filter chips of rows picked on any page.
const labels = new Map();

export function labelOf(filter, id) {
  return labels.get(filter + ' ' + id);
}

export function initLists(onPick) {
  pick = onPick;
  document.querySelectorAll('[data-search]').forEach((input) => {
    input.addEventListener('input', () => {
      const name = input.dataset.search;
      const k = kinds[name];
      k.q = input.value;
      k.page = 0;
      clearTimeout(k.timer);
      k.timer = setTimeout(() => fetchPage(name), DEBOUNCE_MS);
    });
  });
}

export function resetLists() {
  for (const k of Object.values(kinds)) k.page = 0;
}

// renderLists shows the first page that came with the result; a list with
// a search or on a later page asks for its own.
export function renderLists(result, state, params) {
  base = new URLSearchParams(params);
  active = state.filters;
  for (const [name, k] of Object.entries(kinds)) {
    k.seq++;
    if (k.q.trim() || k.page > 0) {
      fetchPage(name);
      continue;
    }
    k.items = result[k.key];
    k.total = result[k.key + '_total'] ?? result[k.key].length;
    render(name);
  }
}

async function fetchPage(name) {
  const k = kinds[name];
  const seq = ++k.seq;
  const p = new URLSearchParams(base);
  p.set('limit', String(PAGE));
  p.set('offset', String(k.page * PAGE));
  p.set('q', k.q.trim());
  const box = document.getElementById('list-' + name);
  box.setAttribute('aria-busy', 'true');
  try {
    const body = await api.getJSON(k.route, p);
    if (seq !== k.seq) return;
    k.items = body[k.key];
    k.total = body.total;
    render(name);
  } catch (e) {
    if (seq !== k.seq) return;
    k.items = [];
    k.total = 0;
    render(name, e.message);
  } finally {
    if (seq === k.seq) box.removeAttribute('aria-busy');
  }
}

function render(name, error) {
  const k = kinds[name];
  const box = document.getElementById('list-' + name);
  const needle = k.q.trim();
  const pages = Math.max(1, Math.ceil(k.total / PAGE));
  const rows = k.items;
  for (const x of rows) labels.set(k.filter + ' ' + x.id, k.text(x));
  const tbody = box.querySelector('tbody');
  const empty = error ? 'Could not load the ' + name + 's: ' + esc(error)
    : needle ? 'No ' + name + ' matches the search.' : 'No ' + name + 's in this selection.';
  tbody.innerHTML = rows.length
    ? rows.map((x, i) => '<tr' + (active[k.filter].includes(x.id) ? ' class="active"' : '') + '><td><button type="button" class="link" data-i="' + i +
      '" title="Filter by this ' + name + '">' + esc(k.text(x)) + '</button></td><td class="num">' + x.count + '</td></tr>').join('')
    : '<tr><td colspan="2" class="empty">' + empty + '</td></tr>';
  tbody.querySelectorAll('button[data-i]').forEach((b) => {
    b.addEventListener('click', () => pick(k.filter, rows[Number(b.dataset.i)].id));
  });
  const nav = box.querySelector('.pager');
  const from = k.total ? k.page * PAGE + 1 : 0;
  nav.innerHTML = '<button type="button" data-move="-1"' + (k.page === 0 ? ' disabled' : '') + '>Previous</button>' +
    '<span class="hint">' + from + '–' + Math.min(k.page * PAGE + rows.length, k.total) + ' of ' + k.total + '</span>' +
    '<button type="button" data-move="1"' + (k.page >= pages - 1 ? ' disabled' : '') + '>Next</button>';
  nav.querySelectorAll('button[data-move]').forEach((b) => {
    b.addEventListener('click', async () => {
      k.page += Number(b.dataset.move);
      await fetchPage(name);
      box.querySelector('.pager button[data-move="' + b.dataset.move + '"]:not([disabled])')?.focus();
    });
  });
}
