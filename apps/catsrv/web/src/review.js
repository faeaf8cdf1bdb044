// The review queue: answers voted down, or left unanswered, newest first,
// a page at a time (cursor paging, as the chat log); each entry opens its
// conversation's thread. From /review; a server without it (404) hides the
// panel.
import * as api from './api.js';
import { esc } from './charts.js';
import { openThread } from './thread.js';
import { whenVisible } from './lazy.js';

const PAGE = 10;
const $ = (id) => document.getElementById(id);
let base = new URLSearchParams();
let cat = '';
let kind = 'down';
let cursors = [''];
let next = '';
let entries = [];
let seq = 0;
let fail = () => {};

export function initReview(onFail) {
  fail = onFail;
  document.querySelectorAll('[data-review]').forEach((b) => b.addEventListener('click', () => {
    kind = b.dataset.review;
    cursors = [''];
    show();
  }));
  $('review-next').addEventListener('click', () => { cursors.push(next); show(); });
  $('review-prev').addEventListener('click', () => { if (cursors.length > 1) { cursors.pop(); show(); } });
  $('review').querySelector('tbody').addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-entry]');
    if (!b) return;
    const e = entries[Number(b.dataset.entry)];
    openThread({ cat, conversation: e.conversation_id, user: e.user_id || '', time: e.time, question: e.question }, '', b);
  });
}

// loadReview starts the queue of the selection (the CAT, dates and
// filters of params) over, once the panel is in view.
export function loadReview(params) {
  if (params.toString() === base.toString() && $('review').dataset.loaded === 'true') return;
  base = new URLSearchParams(params);
  cat = base.get('catname') || '';
  cursors = [''];
  $('review').dataset.loaded = 'false';
  whenVisible($('review'), show);
}

async function show() {
  const my = ++seq;
  document.querySelectorAll('[data-review]').forEach((b) => b.setAttribute('aria-pressed', String(b.dataset.review === kind)));
  const p = new URLSearchParams(base);
  p.set('kind', kind);
  p.set('limit', String(PAGE));
  const cursor = cursors[cursors.length - 1];
  if (cursor) p.set('cursor', cursor);
  $('review').setAttribute('aria-busy', 'true');
  $('review').dataset.state = 'loading';
  let page;
  try {
    page = await api.optionalJSON('/review', p);
  } catch (e) {
    if (my !== seq) return;
    $('review').setAttribute('aria-busy', 'false');
    if (e.status === 401 || e.status === 403) { fail(e); return; }
    entries = [];
    render('The review queue could not be read: ' + e.message);
    return;
  }
  if (my !== seq) return;
  $('review').setAttribute('aria-busy', 'false');
  $('review').hidden = page === null;
  if (page === null) return;
  $('review').dataset.loaded = 'true';
  $('review').dataset.state = 'ready';
  entries = page.entries || [];
  next = page.next_cursor || '';
  render('');
}

function render(error) {
  const when = (t) => (t ? esc(t.replace('T', ' ').replace(/(\.\d+)?Z$/, '')) : '');
  $('review').querySelector('tbody').innerHTML = entries.length
    ? entries.map((e, k) => '<tr><td class="nowrap">' + when(e.time) + '</td><td>' + esc(e.question) + '</td><td>' + esc(e.answer) + '</td><td>' +
      esc(e.model) + '</td><td>' + esc(e.topic) + '</td><td>' + esc(e.rating || '') + '</td><td>' + esc(e.reason || '') + '</td><td>' + esc(e.comment || '') +
      '</td><td>' + (e.conversation_id ? '<button type="button" data-entry="' + k + '">Thread</button>' : '') + '</td></tr>').join('')
    : '<tr><td colspan="9" class="empty">' + esc(error || (kind === 'down' ? 'No answers voted down.' : 'No unanswered questions.')) + '</td></tr>';
  $('review-prev').disabled = cursors.length === 1;
  $('review-next').disabled = !next;
  const from = (cursors.length - 1) * PAGE + 1;
  $('review-page').textContent = entries.length ? 'Entries ' + from + '–' + (from + entries.length - 1) : '';
}
