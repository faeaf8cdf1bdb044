// The top questions and answers: searchable, paged tables whose rows add
// their question or answer as a filter.
import { esc } from './charts.js';

const PAGE = 10;
const kinds = {
  question: { filter: 'questionid', items: [], page: 0, q: '', text: (x) => x.question },
  answer: { filter: 'answerid', items: [], page: 0, q: '', text: (x) => x.answers },
};
let pick = () => {};
let active = { questionid: [], answerid: [] };

export function initLists(onPick) {
  pick = onPick;
  document.querySelectorAll('[data-search]').forEach((input) => {
    input.addEventListener('input', () => {
      const k = kinds[input.dataset.search];
      k.q = input.value;
      k.page = 0;
      render(input.dataset.search);
    });
  });
}

export function resetLists() {
  for (const k of Object.values(kinds)) k.page = 0;
}

export function renderLists(result, state) {
  kinds.question.items = result.questions;
  kinds.answer.items = result.answers;
  active = state.filters;
  render('question');
  render('answer');
}

function render(name) {
  const k = kinds[name];
  const box = document.getElementById('list-' + name);
  const needle = k.q.trim().toLowerCase();
  const matched = needle ? k.items.filter((x) => k.text(x).toLowerCase().includes(needle)) : k.items;
  const pages = Math.max(1, Math.ceil(matched.length / PAGE));
  k.page = Math.min(k.page, pages - 1);
  const rows = matched.slice(k.page * PAGE, (k.page + 1) * PAGE);
  const tbody = box.querySelector('tbody');
  tbody.innerHTML = rows.length
    ? rows.map((x, i) => '<tr' + (active[k.filter].includes(x.id) ? ' class="active"' : '') + '><td><button type="button" class="link" data-i="' + i +
      '" title="Filter by this ' + name + '">' + esc(k.text(x)) + '</button></td><td class="num">' + x.count + '</td></tr>').join('')
    : '<tr><td colspan="2" class="empty">' + (needle ? 'No ' + name + ' matches the search.' : 'No ' + name + 's in this selection.') + '</td></tr>';
  tbody.querySelectorAll('button[data-i]').forEach((b) => {
    b.addEventListener('click', () => pick(k.filter, rows[Number(b.dataset.i)].id));
  });
  const nav = box.querySelector('.pager');
  const from = matched.length ? k.page * PAGE + 1 : 0;
  nav.innerHTML = '<button type="button" data-move="-1"' + (k.page === 0 ? ' disabled' : '') + '>Previous</button>' +
    '<span class="hint">' + from + '–' + Math.min((k.page + 1) * PAGE, matched.length) + ' of ' + matched.length + '</span>' +
    '<button type="button" data-move="1"' + (k.page >= pages - 1 ? ' disabled' : '') + '>Next</button>';
  nav.querySelectorAll('button[data-move]').forEach((b) => {
    b.addEventListener('click', () => {
      k.page += Number(b.dataset.move);
      render(name);
      box.querySelector('.pager button[data-move="' + b.dataset.move + '"]')?.focus();
    });
  });
}
