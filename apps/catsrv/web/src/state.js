// The view's state lives in the page URL, so a view can be bookmarked and
// shared: ?cat=demo&range=30&source=warehouse&topic=billing&model=...
// A custom range is range=custom&from=YYYY-MM-DD&to=YYYY-MM-DD (UTC days,
// both included).

export const FILTERS = ['topic', 'model', 'persona', 'questionid', 'answerid'];
export const RANGES = ['7', '30', '90', 'all', 'custom'];
const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

// isDay reports whether v is a real UTC day YYYY-MM-DD.
export function isDay(v) {
  return typeof v === 'string' && DAY_RE.test(v) && !Number.isNaN(Date.parse(v + 'T00:00:00Z')) &&
    new Date(Date.parse(v + 'T00:00:00Z')).toISOString().slice(0, 10) === v;
}
export const SOURCES = ['warehouse', 'raw'];

export function read() {
  const p = new URLSearchParams(location.search);
  const s = {
    cat: p.get('cat') || '',
    range: RANGES.includes(p.get('range')) ? p.get('range') : '30',
    source: SOURCES.includes(p.get('source')) ? p.get('source') : 'warehouse',
    from: p.get('from') || '',
    to: p.get('to') || '',
    filters: {},
  };
  // A custom range needs two days in order; anything else is the default.
  if (s.range === 'custom' && !(isDay(s.from) && isDay(s.to) && s.from <= s.to)) s.range = '30';
  if (s.range !== 'custom') { s.from = ''; s.to = ''; }
  for (const f of FILTERS) s.filters[f] = p.getAll(f);
  return s;
}

export function write(s, replace) {
  const p = new URLSearchParams();
  if (s.cat) p.set('cat', s.cat);
  p.set('range', s.range);
  if (s.range === 'custom') { p.set('from', s.from); p.set('to', s.to); }
  p.set('source', s.source);
  for (const f of FILTERS) for (const v of s.filters[f]) p.append(f, v);
  const url = location.pathname + '?' + p.toString();
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

const DAY = 86400000;

function ymd(ms) { return new Date(ms).toISOString().slice(0, 10); }

// dates turns a range preset into startDate (inclusive) and endDate
// (exclusive) UTC days: the last N days, today included. keep is the
// CAT's analytics.retention_days (0: forever): a CAT keeps today and the
// keep days before it, so no range reaches further back than that.
export function dates(range, now = Date.now(), keep = 0) {
  const today = Math.floor(now / DAY) * DAY;
  let n = range === 'all' ? 0 : Number(range);
  if (keep > 0 && (n === 0 || n > keep + 1)) n = keep + 1;
  if (!n) return {};
  return { startDate: ymd(today - (n - 1) * DAY), endDate: ymd(today + DAY) };
}

// earliest is the first day a CAT keeping keep days (0: forever) still
// holds, or '' when it keeps everything.
export function earliest(keep, now = Date.now()) {
  return keep > 0 ? ymd(Math.floor(now / DAY) * DAY - keep * DAY) : '';
}

// span is the state's dates: the preset's, or the custom range's
// (startDate inclusive, endDate exclusive), never older than what the CAT
// keeps. {} is all time.
export function span(s, now = Date.now()) {
  if (s.range !== 'custom') return dates(s.range, now, s.keep);
  const first = earliest(s.keep, now);
  let start = s.from;
  if (first && start < first) start = first;
  let end = nextDay(s.to);
  if (end <= start) end = nextDay(start);
  return { startDate: start, endDate: end };
}

// days is the length of a span in days (0 for all time).
export function days(d) {
  if (!d.startDate) return 0;
  return Math.round((Date.parse(d.endDate + 'T00:00:00Z') - Date.parse(d.startDate + 'T00:00:00Z')) / DAY);
}

// previous is the period of the same length just before d, or null for
// all time or when the CAT no longer keeps all of it (the comparison
// would be with a period the retention job has emptied).
export function previous(d, keep = 0, now = Date.now()) {
  const n = days(d);
  if (!n) return null;
  const start = ymd(Date.parse(d.startDate + 'T00:00:00Z') - n * DAY);
  const first = earliest(keep, now);
  if (first && start < first) return null;
  return { startDate: start, endDate: d.startDate };
}

// withDates returns params with its dates replaced by d's.
export function withDates(params, d) {
  const p = new URLSearchParams(params);
  p.delete('startDate');
  p.delete('endDate');
  if (d.startDate) { p.set('startDate', d.startDate); p.set('endDate', d.endDate); }
  return p;
}

// allowed reports whether a range preset fits in what the CAT keeps.
export function allowed(range, keep = 0) {
  return range === 'all' || range === 'custom' || !(keep > 0) || Number(range) <= keep + 1;
}

// apiParams are the analytics parameters of the state.
export function apiParams(s) {
  const p = new URLSearchParams();
  p.set('catname', s.cat);
  const d = span(s);
  if (d.startDate) { p.set('startDate', d.startDate); p.set('endDate', d.endDate); }
  for (const f of FILTERS) for (const v of s.filters[f]) p.append(f, v);
  return p;
}

export function dayList(start, endExclusive) {
  const out = [];
  for (let t = Date.parse(start + 'T00:00:00Z'); t < Date.parse(endExclusive + 'T00:00:00Z'); t += DAY) out.push(ymd(t));
  return out;
}

export function nextDay(day) { return ymd(Date.parse(day + 'T00:00:00Z') + DAY); }
