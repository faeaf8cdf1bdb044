// The chat log: the interactions behind the selection, a page at a time
// (cursor paging, newest first), and its exports.
import * as api from './api.js';
import { esc } from './charts.js';

const PAGE = 20;
let params = null;
let cursors = ['']; // cursor of each page seen so far; the last is the current page's
let next = '';
let seq = 0;
let fail = () => {};

const $ = (id) => document.getElementById(id);

export function initLog(onFail) {
  fail = onFail;
  $('log-next').addEventListener('click', () => { cursors.push(next); show(); });
  $('log-prev').addEventListener('click', () => { if (cursors.length > 1) { cursors.pop(); show(); } });
  $('export-csv').addEventListener('click', () => exportAs('csv'));
  $('export-jsonl').addEventListener('click', () => exportAs('jsonl'));
}

// loadLog starts the log over for a new selection. It resolves to
// whether the first page arrived.
export function loadLog(p) {
  params = p;
  cursors = [''];
  return show();
}

async function show() {
  const my = ++seq;
  const p = new URLSearchParams(params);
  p.set('limit', String(PAGE));
  const cursor = cursors[cursors.length - 1];
  if (cursor) p.set('cursor', cursor);
  const tbody = document.querySelector('#chatlog tbody');
  document.getElementById('chatlog').setAttribute('aria-busy', 'true');
  let page;
  try {
    page = await api.getJSON('/interactions', p);
  } catch (e) {
    if (my === seq) fail(e);
    return false;
  }
  if (my !== seq) return false;
  document.getElementById('chatlog').setAttribute('aria-busy', 'false');
  next = page.next_cursor;
  tbody.innerHTML = page.interactions.length
    ? page.interactions.map((i) => '<tr><td class="nowrap">' + esc(i.time.replace('T', ' ').replace(/(\.\d+)?Z$/, '')) + '</td><td>' + esc(i.question) +
      '</td><td>' + esc(i.answer) + '</td><td>' + esc(i.topic) + '</td><td>' + esc(i.model) + '</td><td>' + esc(i.persona) + '</td></tr>').join('')
    : '<tr><td colspan="6" class="empty">No interactions in this range.</td></tr>';
  $('log-prev').disabled = cursors.length === 1;
  $('log-next').disabled = !next;
  const from = (cursors.length - 1) * PAGE + 1;
  $('log-page').textContent = page.interactions.length ? 'Rows ' + from + '–' + (from + page.interactions.length - 1) : '';
  return true;
}

async function exportAs(format) {
  const p = new URLSearchParams(params);
  p.set('format', format);
  const button = $('export-' + format);
  button.disabled = true;
  try {
    const r = await api.download('/interactions/export', p, 'interactions.' + format);
    $('status').textContent = 'Exported ' + (r.truncated ? 'the newest rows (the export limit) of ' : '') + r.total + ' interactions as ' + format.toUpperCase() + '.';
  } catch (e) {
    fail(e);
  } finally {
    button.disabled = false;
  }
}
