// Usage and feedback: the headline tokens, cost, latency and satisfaction
// with their change against the previous period (asked after the first
// view is drawn); tokens and cost per day
// stacked by model; latency percentiles per model; satisfaction by topic.
// From /usage and /feedback; a server without them (404) hides their
// panels and figures, and the rest of the page works as before.
import * as api from './api.js';
import * as st from './state.js';
import * as fmt from './fmt.js';
import { series, table } from './charts.js';
import { whenVisible } from './lazy.js';

// DRAWN is how many models (latency) or topics (satisfaction) a chart
// shows, the largest; their tables list all.
const DRAWN = 12;
// TOP is how many models get their own colour in the per-day charts (one
// request each); the others are summed into "other models" (one more).
const TOP = 5;
const $ = (id) => document.getElementById(id);
let seq = 0;

// figure sets a headline figure: its value and the exact number for tools.
function figure(name, text, value) {
  $(name).textContent = text;
  $(name).dataset.value = value === null || value === undefined ? '' : String(value);
}

// change sets a figure's change against the previous period and the
// previous value it compared with.
function change(name, changeText, prev) {
  const c = $(name + '-change');
  c.textContent = changeText || '';
  c.dataset.prev = prev === null || prev === undefined ? '' : String(prev);
  c.className = 'change' + (/^\+/.test(changeText) ? ' up' : /^−/.test(changeText) ? ' down' : '');
}

// CHANGES are the figures whose change against the previous period the
// page shows.
export const CHANGES = ['total', 'tokens', 'cost', 'latency', 'satisfaction'];

// pendingChanges shows, until the previous period's figures come, what
// each change will compare with (text: "… vs previous 30 days", or
// another text for all of them), so the place is painted with the first
// view and is only filled in later.
export function pendingChanges(text) {
  for (const name of CHANGES) change(name, text, null);
}

function hide(ids, hidden) { for (const id of ids) $(id).hidden = hidden; }

const USAGE_PANELS = ['stat-tokens', 'stat-cost', 'stat-latency', 'fig-tokens-day', 'fig-cost-day', 'fig-latency'];
const FEEDBACK_PANELS = ['stat-satisfaction', 'fig-satisfaction'];

function withParam(params, key, value) {
  const p = new URLSearchParams(params);
  p.set(key, value);
  return p;
}

// fetchHead asks /usage (by model) and /feedback (by topic) for the
// selection: the headline figures of the first view. A failure is kept
// as {error}.
export function fetchHead(params) {
  const one = (route, by) => api.optionalJSON(route, withParam(params, 'group_by', by)).then((cur) => ({ cur }), (error) => ({ error }));
  return Promise.all([one('/usage', 'model'), one('/feedback', 'topic')]).then(([usage, feedback]) => ({ usage, feedback }));
}

// fetchBefore asks the same of the previous period prev, for the changes.
// A failure shows no change: the figures themselves stand.
export function fetchBefore(params, prev) {
  const one = (route, by) => api.optionalJSON(route, st.withDates(withParam(params, 'group_by', by), prev)).catch(() => null);
  return Promise.all([one('/usage', 'model'), one('/feedback', 'topic')]).then(([usage, feedback]) => ({ usage, feedback }));
}

// showHead shows the headline figures of fetchHead's answer and hides
// what the server does not offer; the charts are drawn when their panel
// comes into view (drawPanels). It returns the refusal of the token, if
// any, for the page to handle.
export function showHead(head, params, s) {
  const my = ++seq;
  let refused = null;
  const errors = [];
  for (const part of [head.usage, head.feedback]) {
    if (!part.error) continue;
    if (part.error.status === 401 || part.error.status === 403) refused = part.error;
    else errors.push(part.error.message);
  }
  $('usage-error').textContent = errors.length ? 'Usage and feedback: ' + errors.join('; ') : '';
  $('usage-error').hidden = !errors.length;
  const u = head.usage.error ? null : head.usage.cur;
  const f = head.feedback.error ? null : head.feedback.cur;
  hide(USAGE_PANELS, u === null);
  hide(FEEDBACK_PANELS, f === null);
  $('usage').hidden = u === null && f === null;
  $('usage').dataset.state = 'waiting';
  if (u) usageFigures(u);
  if (f) feedbackFigures(f);
  whenVisible($('usage'), async () => {
    if (my !== seq) return;
    $('usage').dataset.state = 'loading';
    try {
      if (f) satisfaction(f);
      if (u) await usageCharts(u, params, s, () => my === seq);
    } catch (e) {
      if (my !== seq) return;
      $('usage-error').textContent = 'Usage and feedback: ' + e.message;
      $('usage-error').hidden = false;
    }
    if (my === seq) $('usage').dataset.state = 'ready';
  });
  return refused;
}

function usageFigures(cur) {
  figure('tokens', fmt.tokens(tokensOf(cur)), tokensOf(cur));
  $('tokens-split').textContent = fmt.tokens(cur.input_tokens) + ' in, ' + fmt.tokens(cur.output_tokens) + ' out';
  figure('cost', fmt.usd(cur.cost_usd), cur.cost_usd);
  figure('latency', fmt.ms(cur.latency_ms ? cur.latency_ms.p50 : null), cur.latency_ms ? cur.latency_ms.p50 : null);
  $('latency-p90').textContent = cur.latency_ms ? 'p90 ' + fmt.ms(cur.latency_ms.p90) + ', p99 ' + fmt.ms(cur.latency_ms.p99) : '';
}

const tokensOf = (u) => u.input_tokens + u.output_tokens;

// showChanges shows the changes of the usage and feedback figures of head
// against before (fetchBefore's answer; null: no previous period).
export function showChanges(head, before, n) {
  const u = head.usage.error ? null : head.usage.cur;
  const f = head.feedback.error ? null : head.feedback.cur;
  const ub = before && u ? before.usage : null;
  const fb = before && f ? before.feedback : null;
  if (u) {
    change('tokens', ub ? fmt.change(tokensOf(u), tokensOf(ub), n) : '', ub ? tokensOf(ub) : null);
    change('cost', ub ? fmt.change(u.cost_usd, ub.cost_usd, n) : '', ub ? ub.cost_usd : null);
    const p50 = u.latency_ms ? u.latency_ms.p50 : null;
    const p50Before = ub && ub.latency_ms ? ub.latency_ms.p50 : null;
    change('latency', ub && p50 !== null && p50Before !== null ? fmt.change(p50, p50Before, n) : '', p50Before);
  }
  if (f) change('satisfaction', fb ? fmt.change(f.satisfaction, fb.satisfaction, n, { points: true }) : '', fb ? fb.satisfaction : null);
}

async function usageCharts(cur, params, s, current) {
  // Only the models the selection keeps (a model filter may leave others
  // in the groups, as the /all* routes' lists do).
  let groups = cur.groups || [];
  if (s.filters.model.length) groups = groups.filter((g) => s.filters.model.includes(g.key));
  latency(groups);
  await perDay(params, s, groups, current);
}

// latency draws p50, p90 and p99 of each model that has latencies.
function latency(groups) {
  const timed = groups.filter((g) => g.latency_ms && g.latency_ms.max > 0);
  const drawn = timed.slice(0, DRAWN);
  const pts = ['p50', 'p90', 'p99'];
  series('latency', drawn.map((g) => g.key), pts.map((p) => ({ label: p, data: drawn.map((g) => g.latency_ms[p]) })), {
    horizontal: true, format: fmt.ms,
    summary: timed.length ? 'Latency per model: ' + timed.map((g) => g.key + ' p50 ' + fmt.ms(g.latency_ms.p50) + ', p90 ' + fmt.ms(g.latency_ms.p90) + ', p99 ' + fmt.ms(g.latency_ms.p99)).join('; ') : 'Latency per model: none recorded',
  });
  table('table-latency', ['Model', 'p50', 'p90', 'p99', 'max', 'Interactions'],
    timed.map((g) => [g.key, ...['p50', 'p90', 'p99', 'max'].map((p) => [fmt.ms(g.latency_ms[p]), g.latency_ms[p]]), [fmt.count(g.total_interactions), g.total_interactions]]),
    'No latencies recorded in this selection.');
}

// perDay asks each of the TOP busiest models for its days (group_by=day,
// model=that model) and, when there are more models, the selection's
// days, whose remainder is "other models".
async function perDay(params, s, groups, current) {
  const byTokens = [...groups].sort((a, b) => (b.input_tokens + b.output_tokens) - (a.input_tokens + a.output_tokens) || (a.key < b.key ? -1 : 1));
  const top = byTokens.slice(0, TOP);
  // A day per group: up to 1000 (the route's most), so "all" is whole.
  const byDay = withParam(withParam(params, 'group_by', 'day'), 'limit', '1000');
  const asks = top.map((g) => withParam(byDay, 'model', g.key));
  if (byTokens.length > TOP) asks.push(byDay);
  const answers = await Promise.all(asks.map((p) => api.getJSON('/usage', p)));
  if (!current()) return;
  const lines = top.map((g, i) => ({ label: g.key, days: new Map(answers[i].groups.map((d) => [d.key, d])) }));
  if (byTokens.length > TOP) {
    const all = answers[answers.length - 1].groups;
    const rest = new Map();
    for (const d of all) {
      const o = { input_tokens: d.input_tokens, output_tokens: d.output_tokens, cost_usd: d.cost_usd };
      for (const l of lines) {
        const m = l.days.get(d.key);
        if (m) { o.input_tokens -= m.input_tokens; o.output_tokens -= m.output_tokens; o.cost_usd -= m.cost_usd; }
      }
      o.cost_usd = Math.max(0, o.cost_usd);
      rest.set(d.key, o);
    }
    lines.push({ label: 'other models', days: rest, color: '#9aa3af' });
  }
  // Every day of the range, days without usage as zero.
  const d = st.span(s);
  let dayList;
  if (d.startDate) dayList = st.dayList(d.startDate, d.endDate);
  else {
    const seen = [...new Set(lines.flatMap((l) => [...l.days.keys()]))].sort();
    dayList = seen.length ? st.dayList(seen[0], st.nextDay(seen[seen.length - 1])) : [];
  }
  const tokOf = (x) => (x ? x.input_tokens + x.output_tokens : 0);
  const costOf = (x) => (x ? x.cost_usd : 0);
  for (const [name, of, format, what] of [['tokens-day', tokOf, fmt.tokens, 'Tokens'], ['cost-day', costOf, fmt.usd, 'Cost']]) {
    const data = lines.map((l) => ({ label: l.label, color: l.color, data: dayList.map((day) => of(l.days.get(day))) }));
    const totals = lines.map((l, i) => l.label + ' ' + format(data[i].data.reduce((a, b) => a + b, 0)));
    series(name, dayList, data, {
      stacked: true, format,
      summary: what + ' per day by model' + (dayList.length ? ' from ' + dayList[0] + ' to ' + dayList[dayList.length - 1] + ': ' + (totals.join(', ') || 'none') : ': none'),
    });
    table('table-' + name, ['Day', ...lines.map((l) => l.label)], dayList.map((day) => [day, ...lines.map((l) => [format(of(l.days.get(day))), of(l.days.get(day))])]),
      'No usage in this selection.');
  }
}

function feedbackFigures(cur) {
  figure('satisfaction', cur.satisfaction === null ? 'no votes' : fmt.pct(cur.satisfaction), cur.satisfaction);
  $('votes').textContent = fmt.count(cur.up) + ' up, ' + fmt.count(cur.down) + ' down';
}

function satisfaction(cur) {
  const voted = (cur.groups || []).filter((g) => g.satisfaction !== null && g.satisfaction !== undefined);
  const drawn = voted.slice(0, DRAWN);
  series('satisfaction', drawn.map((g) => g.key), [{ label: 'Satisfaction', data: drawn.map((g) => Math.round(g.satisfaction * 1000) / 10) }], {
    horizontal: true, format: (v) => v + '%',
    summary: voted.length ? 'Satisfaction by topic: ' + voted.map((g) => g.key + ' ' + fmt.pct(g.satisfaction) + ' of ' + (g.up + g.down) + ' votes').join(', ') : 'Satisfaction by topic: no votes',
  });
  table('table-satisfaction', ['Topic', 'Up', 'Down', 'Satisfaction'],
    (cur.groups || []).map((g) => [g.key, [fmt.count(g.up), g.up], [fmt.count(g.down), g.down],
      g.satisfaction === null || g.satisfaction === undefined ? 'no votes' : [fmt.pct(g.satisfaction), g.satisfaction]]),
    'No feedback in this selection.');
}
