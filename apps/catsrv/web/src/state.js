// The view's state lives in the page URL, so a view can be bookmarked and
// shared: ?cat=demo&range=30&source=warehouse&topic=billing&model=...

export const FILTERS = ['topic', 'model', 'persona', 'questionid', 'answerid'];
export const RANGES = ['7', '30', '90', 'all'];
export const SOURCES = ['warehouse', 'raw'];

export function read() {
  const p = new URLSearchParams(location.search);
  const s = {
    cat: p.get('cat') || '',
    range: RANGES.includes(p.get('range')) ? p.get('range') : '30',
    source: SOURCES.includes(p.get('source')) ? p.get('source') : 'warehouse',
    filters: {},
  };
  for (const f of FILTERS) s.filters[f] = p.getAll(f);
  return s;
}

export function write(s, replace) {
  const p = new URLSearchParams();
  if (s.cat) p.set('cat', s.cat);
  p.set('range', s.range);
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

// allowed reports whether a range preset fits in what the CAT keeps.
export function allowed(range, keep = 0) {
  return range === 'all' || !(keep > 0) || Number(range) <= keep + 1;
}

// apiParams are the analytics parameters of the state.
export function apiParams(s) {
  const p = new URLSearchParams();
  p.set('catname', s.cat);
  const d = dates(s.range, Date.now(), s.keep);
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
