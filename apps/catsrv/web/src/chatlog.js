// The chat log: the interactions behind the selection, a page at a time
// (cursor paging, newest first), and its exports.
import * as api from './api.js';
import { esc } from './charts.js';
import { openThread } from './thread.js';

const PAGE = 20;
let params = null;
let cursors = ['']; // cursor of each page seen so far; the last is the current page's
let next = '';
let rows = [];
let seq = 0;
let fail = () => {};

const $ = (id) => document.getElementById(id);

export function initLog(onFail) {
  fail = onFail;
  $('log-next').addEventListener('click', () => { cursors.push(next); show(); });
  $('log-prev').addEventListener('click', () => { if (cursors.length > 1) { cursors.pop(); show(); } });
  $('export-csv').addEventListener('click', () => exportAs('csv'));
  $('export-jsonl').addEventListener('click', () => exportAs('jsonl'));
  document.querySelector('#chatlog tbody').addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-action]');
    if (!b) return;
    if (b.dataset.action === 'thread') {
      const i = rows[Number(b.dataset.row)];
      const cat = new URLSearchParams(params).get('catname') || '';
      openThread({ cat, conversation: i.conversation_id, user: i.user_id, time: i.time, question: i.question }, cursors[cursors.length - 1], b);
      return;
    }
    ask(b.dataset.action, b.dataset.user, b.dataset.conversation);
  });
  $('confirm-no').addEventListener('click', closeConfirm);
  $('confirm-yes').addEventListener('click', () => { const act = pending; closeConfirm(); if (act) act(); });
}

// pending is what the confirmation panel does on yes.
let pending = null;

function closeConfirm() {
  pending = null;
  $('confirm').hidden = true;
}

// ask shows the confirmation of a deletion; yes runs it and reloads the
// page of the log.
function ask(action, user, conversation) {
  const cat = new URLSearchParams(params).get('catname') || '';
  let text, path, done;
  if (action === 'delete-conversation') {
    text = 'Delete conversation ' + conversation + ' of user ' + user + ' (its messages)? Its interactions stay in the analytics.';
    path = '/api/v1/cat/users/' + encodeURIComponent(user) + '/conversations/' + encodeURIComponent(conversation) + '?catname=' + encodeURIComponent(cat);
    done = 'Deleted conversation ' + conversation + '.';
  } else {
    text = 'Erase user ' + user + '? Their account, memory, sessions, conversations and interactions in every CAT are deleted for good.';
    path = '/api/v1/auth/users/' + encodeURIComponent(user);
    done = 'Erased user ' + user + '.';
  }
  $('confirm-text').textContent = text;
  pending = async () => {
    try {
      await api.remove(path);
      $('status').textContent = done;
      await show();
    } catch (e) {
      fail(e);
    }
  };
  $('confirm').hidden = false;
  $('confirm-no').focus();
}

function manage(i, k) {
  let out = '';
  if (i.conversation_id) out += '<button type="button" data-action="thread" data-row="' + k + '">Thread</button>';
  if (i.conversation_id && i.user_id) {
    out += '<button type="button" data-action="delete-conversation" data-user="' + esc(i.user_id) + '" data-conversation="' + esc(i.conversation_id) + '">Delete conversation</button>';
  }
  if (i.user_id) out += '<button type="button" data-action="erase-user" data-user="' + esc(i.user_id) + '">Erase user</button>';
  return out;
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
  rows = page.interactions;
  tbody.innerHTML = page.interactions.length
    ? page.interactions.map((i, k) => '<tr><td class="nowrap">' + esc(i.time.replace('T', ' ').replace(/(\.\d+)?Z$/, '')) + '</td><td>' + esc(i.question) +
      '</td><td>' + esc(i.answer) + '</td><td>' + esc(i.topic) + '</td><td>' + esc(i.model) + '</td><td>' + esc(i.persona) + '</td><td>' + esc(i.user_id) + '</td><td class="manage">' + manage(i, k) + '</td></tr>').join('')
    : '<tr><td colspan="8" class="empty">No interactions in this range.</td></tr>';
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
