// A conversation's whole thread, opened from a chat-log row or a review
// entry. An admin cannot read another user's conversation through the chat
// routes (only its owner can, and an admin can only delete it), so the
// thread is what the chat log holds: the CAT's interactions with that
// conversation_id, read from /interactions. That route has no
// conversation filter, so the page reads the interactions around the
// turn's day, as many whole days as fit in BUDGET (from /daily_counts), and
// keeps the conversation's; on a day busier than that it reads the BUDGET
// interactions up to the turn, and says so.
import * as api from './api.js';
import * as st from './state.js';
import { esc } from './charts.js';

const BUDGET = 5000;
const PAGE = 1000;
const $ = (id) => document.getElementById(id);
let seq = 0;
let opener = null;

export function initThread() {
  $('thread-close').addEventListener('click', close);
  $('thread').addEventListener('close', () => { if (opener && opener.isConnected) opener.focus(); opener = null; });
}

function close() { $('thread').close(); }

// window picks the days around day whose interactions fit in the budget,
// or null when day alone is busier than that.
function pickDays(daily, day) {
  const days = daily.filter((d) => d.count > 0);
  let i = days.findIndex((d) => d.date === day);
  if (i < 0) {
    // The turn's day has no count (erased meanwhile): start beside it.
    days.push({ date: day, count: 0 });
    days.sort((a, b) => (a.date < b.date ? -1 : 1));
    i = days.findIndex((d) => d.date === day);
  }
  if (days[i].count > BUDGET) return null;
  let lo = i;
  let hi = i;
  let sum = days[i].count;
  for (let grew = true; grew;) {
    grew = false;
    if (hi + 1 < days.length && sum + days[hi + 1].count <= BUDGET) { sum += days[++hi].count; grew = true; }
    if (lo > 0 && sum + days[lo - 1].count <= BUDGET) { sum += days[--lo].count; grew = true; }
  }
  return { startDate: days[lo].date, endDate: st.nextDay(days[hi].date), all: lo === 0 && hi === days.length - 1, count: sum };
}

// openThread shows conversation's turns. turn is {cat, conversation,
// user, time} of the row it was opened from; cursor the chat-log cursor
// the row's page was read with ('' for the first page), a position the
// busy-day case reads on from.
export async function openThread(turn, cursor, from) {
  const my = ++seq;
  opener = from || null;
  $('thread-title').textContent = 'Conversation ' + turn.conversation;
  $('thread-who').textContent = turn.user ? 'User ' + turn.user : '';
  $('thread-note').textContent = 'Reading the chat log…';
  $('thread-turns').innerHTML = '';
  $('thread').dataset.state = 'loading';
  if (!$('thread').open) $('thread').showModal();
  try {
    const at = Date.parse(turn.time);
    const day = new Date(at).toISOString().slice(0, 10);
    const daily = (await api.getJSON('/daily_counts', new URLSearchParams({ catname: turn.cat }))).daily_counts;
    const span = pickDays(daily, day);
    const p = new URLSearchParams({ catname: turn.cat, limit: String(PAGE) });
    let next = '';
    if (span) {
      p.set('startDate', span.startDate);
      p.set('endDate', span.endDate);
    } else {
      p.set('startDate', day);
      p.set('endDate', st.nextDay(day));
      next = cursor || '';
    }
    const found = [];
    let read = 0;
    for (let pages = 0; pages < BUDGET / PAGE; pages++) {
      if (next) p.set('cursor', next);
      const page = await api.getJSON('/interactions', p);
      if (my !== seq) return;
      read += page.interactions.length;
      for (const i of page.interactions) if (i.conversation_id === turn.conversation) found.push(i);
      next = page.next_cursor;
      if (!next) break;
    }
    found.reverse(); // oldest first, as the conversation went
    const last = span ? st.dayList(span.startDate, span.endDate).pop() : day;
    $('thread-note').textContent = found.length + (found.length === 1 ? ' turn' : ' turns') + ', from the chat log (' +
      (span && span.all ? 'all of this CAT\'s ' + read.toLocaleString('en-US') + ' interactions read' :
        span ? 'the ' + read.toLocaleString('en-US') + ' interactions from ' + span.startDate + ' to ' + last + ' read; turns outside those days are not shown' :
          'a busy day: the ' + read.toLocaleString('en-US') + ' interactions of ' + day + ' up to this page read; turns after it or on other days are not shown') + ').';
    $('thread-turns').innerHTML = found.map((i) => {
      const here = Date.parse(i.time) === at && (!turn.question || i.question === turn.question);
      return '<li' + (here ? ' class="here" aria-current="true"' : '') + '><p class="meta">' + esc(i.time.replace('T', ' ').replace(/(\.\d+)?Z$/, '')) + ' UTC · ' +
        esc(i.model) + ' · ' + esc(i.topic) + ' · ' + esc(i.persona) + '</p><p class="q"><span class="who">User</span> ' + esc(i.question) +
        '</p><p class="a"><span class="who">Assistant</span> ' + esc(i.answer) + '</p></li>';
    }).join('');
    $('thread').dataset.state = 'ready';
    $('thread').dataset.read = String(read);
  } catch (e) {
    if (my !== seq) return;
    $('thread-note').textContent = 'The thread could not be read: ' + e.message;
    $('thread').dataset.state = 'error';
  }
}
