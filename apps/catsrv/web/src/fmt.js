// How figures are shown, and their change against the previous period.

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

export function count(n) { return Number(n).toLocaleString('en-US'); }

// tokens: 950, 12.3K, 4.5M.
export function tokens(n) { return n < 10000 ? count(n) : compact.format(n); }

// usd: two decimals, more for amounts under a dollar.
export function usd(n) {
  if (n === 0) return '$0';
  if (n < 0.01) return '$' + n.toPrecision(2);
  if (n < 1) return '$' + n.toFixed(3);
  return '$' + n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

// ms: 850 ms, 1.25 s.
export function ms(n) {
  if (n === null || n === undefined) return '–';
  return n < 1000 ? Math.round(n) + ' ms' : (n / 1000).toFixed(2) + ' s';
}

// pct: a ratio 0..1 as a percentage, one decimal.
export function pct(r) { return r === null || r === undefined ? '–' : (r * 100).toFixed(1) + '%'; }

// period names a span of n days.
export function period(n) { return n === 1 ? 'previous day' : 'previous ' + n + ' days'; }

function signed(x, digits) {
  const v = Number(x.toFixed(digits));
  return (v > 0 ? '+' : v < 0 ? '−' : '±') + Math.abs(v).toFixed(digits);
}

// change tells how cur compares with prev over the previous n days:
// "+12% vs previous 30 days" (relative: one decimal under 10%), or in
// percentage points for a ratio ("+3.1 pts …"). Nothing to compare gives
// "no … in previous 30 days".
export function change(cur, prev, n, { points = false } = {}) {
  const what = ' vs ' + period(n);
  if (points) {
    if (cur === null || cur === undefined) return '';
    if (prev === null || prev === undefined) return 'no votes in ' + period(n);
    return signed((cur - prev) * 100, 1) + ' pts' + what;
  }
  if (prev === null || prev === undefined) return '';
  if (prev === 0) return cur === 0 ? '±0%' + what : 'none in ' + period(n);
  const r = ((cur - prev) / prev) * 100;
  return signed(r, Math.abs(r) < 10 ? 1 : 0) + '%' + what;
}
