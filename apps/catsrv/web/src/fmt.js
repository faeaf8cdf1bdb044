// How figures are shown, and their change against the previous period.
// Counts, amounts and token totals are formatted here, as en-US shows
// them, rather than with Intl: its first use loads locale data, a long
// task on a slow phone in the middle of the first view. Intl is kept for
// what these do not cover.

let intlCompact = null;

// group puts en-US thousands separators in the integer part of a decimal
// string: "1234567.5" gives "1,234,567.5".
function group(s) {
  const dot = s.indexOf('.');
  const int = dot < 0 ? s : s.slice(0, dot);
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (dot < 0 ? '' : s.slice(dot));
}

// count: 1,234,567.
export function count(n) {
  n = Number(n);
  return Number.isSafeInteger(n) ? group(String(n)) : n.toLocaleString('en-US');
}

// COMPACT are the units of tokens(), as Intl's en-US compact notation has them.
const COMPACT = [[1e3, 'K'], [1e6, 'M'], [1e9, 'B'], [1e12, 'T']];

// compact: 12.3K, 4.5M, 1B (at most one decimal, halves rounded up, as
// Intl.NumberFormat('en-US', {notation: 'compact', maximumFractionDigits: 1})
// does), for integers from 1000 below 999.95T; Intl for other numbers.
function compact(n) {
  if (Number.isInteger(n) && n >= 1000 && n < 999.95e12) {
    for (let i = COMPACT.length - 1; i >= 0; i--) {
      const [size, unit] = COMPACT[i];
      if (n < size) continue;
      // Tenths of the unit, rounded half up, in exact integer arithmetic.
      const tenth = size / 10;
      const tenths = Math.floor((n + tenth / 2) / tenth);
      if (tenths >= 10000) return '1' + COMPACT[i + 1][1]; // 999.96K is 1M
      return (tenths % 10 ? (tenths / 10).toFixed(1) : String(tenths / 10)) + unit;
    }
  }
  if (!intlCompact) intlCompact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
  return intlCompact.format(n);
}

// tokens: 950, 12.3K, 4.5M.
export function tokens(n) { return n < 10000 ? count(n) : compact(n); }

// usd: two decimals, more for amounts under a dollar.
export function usd(n) {
  if (n === 0) return '$0';
  if (n < 0.01) return '$' + n.toPrecision(2);
  if (n < 1) return '$' + n.toFixed(3);
  if (n >= 1e13) return '$' + n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  // Rounded as Intl rounds, the halves of the shortest decimal form up:
  // 1.005 is $1.01, where toFixed(2) gives 1.00.
  return '$' + group(Number(Math.round(Number(n + 'e2')) + 'e-2').toFixed(2));
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
