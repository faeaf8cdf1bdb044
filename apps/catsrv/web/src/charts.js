// Charts with Chart.js (only the parts used, bundled: no CDN), each with a
// text alternative: an aria-label summary on the canvas and a data table
// whose buttons do what clicking a bar does, for keyboard users.
import {
  Chart, BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend,
} from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

const charts = new Map();
const ACCENT = '#2f6fdb';
const ACTIVE = '#e07a1f';

// geometry records where each bar is drawn (CSS pixels, relative to the
// canvas) in data-bars, so tests and tools can point at a bar.
const geometry = {
  id: 'geometry',
  afterRender(chart) {
    const meta = chart.getDatasetMeta(0);
    const horizontal = chart.options.indexAxis === 'y';
    const bars = meta.data.map((el, i) => {
      const p = el.tooltipPosition();
      const x = horizontal ? (p.x + el.base) / 2 : p.x;
      const y = horizontal ? p.y : (p.y + el.base) / 2;
      return { key: chart.$items ? chart.$items[i].key : chart.data.labels[i], x: Math.round(x), y: Math.round(y) };
    });
    chart.canvas.dataset.bars = JSON.stringify(bars);
  },
};

function short(s, n = 40) { return s.length > n ? s.slice(0, n - 1) + '…' : s; }

function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// bars draws a horizontal bar chart of items [{key, label, count, pct}].
// onPick(key) runs when a bar or its table button is chosen; active keys
// are highlighted.
export function bars(name, items, { onPick, active = [], what }) {
  const canvas = document.getElementById('chart-' + name);
  const table = document.getElementById('table-' + name);
  const labels = items.map((i) => short(i.label));
  const data = items.map((i) => i.count);
  const colors = items.map((i) => (active.includes(i.key) ? ACTIVE : ACCENT));
  canvas.parentElement.style.height = Math.max(120, 28 * items.length + 40) + 'px';
  let chart = charts.get(name);
  if (!chart) {
    chart = new Chart(canvas, {
      type: 'bar',
      data: { labels, datasets: [{ label: what, data, backgroundColor: colors }] },
      options: {
        indexAxis: 'y',
        animation: false,
        maintainAspectRatio: false,
        responsive: true,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const it = chart.$items[ctx.dataIndex];
                return it.count + (it.pct !== undefined ? ' (' + it.pct + '%)' : '');
              },
            },
          },
        },
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } } },
        onClick: (_, elements) => {
          if (elements.length) chart.$onPick(chart.$items[elements[0].index].key);
        },
        onHover: (evt, elements) => { evt.native.target.style.cursor = elements.length ? 'pointer' : 'default'; },
      },
      plugins: [geometry],
    });
    charts.set(name, chart);
  } else {
    chart.data.labels = labels;
    chart.data.datasets[0].data = data;
    chart.data.datasets[0].backgroundColor = colors;
    chart.update();
  }
  chart.$items = items;
  chart.$onPick = onPick;
  const summary = items.length
    ? what + ': ' + items.slice(0, 5).map((i) => i.label + ' ' + i.count + (i.pct !== undefined ? ' (' + i.pct + '%)' : '')).join(', ') +
      (items.length > 5 ? ', and ' + (items.length - 5) + ' more' : '')
    : what + ': none';
  canvas.setAttribute('aria-label', summary);
  const pctHead = items.some((i) => i.pct !== undefined) ? '<th scope="col" class="num">%</th>' : '';
  table.innerHTML = '<thead><tr><th scope="col">' + esc(what) + '</th><th scope="col" class="num">Count</th>' + pctHead + '</tr></thead><tbody>' +
    items.map((i, k) => '<tr><td><button type="button" class="link" data-k="' + k + '">' + esc(i.label) + '</button></td><td class="num">' +
      i.count + '</td>' + (pctHead ? '<td class="num">' + i.pct + '</td>' : '') + '</tr>').join('') + '</tbody>';
  table.querySelectorAll('button[data-k]').forEach((b) => {
    b.addEventListener('click', () => onPick(items[Number(b.dataset.k)].key));
  });
}

// daily draws interactions per day, days without any shown as zero.
export function daily(days) {
  const canvas = document.getElementById('chart-daily');
  const table = document.getElementById('table-daily');
  const labels = days.map((d) => d.date);
  const data = days.map((d) => d.count);
  let chart = charts.get('daily');
  if (!chart) {
    chart = new Chart(canvas, {
      type: 'bar',
      data: { labels, datasets: [{ label: 'Interactions', data, backgroundColor: ACCENT }] },
      options: {
        animation: false,
        maintainAspectRatio: false,
        responsive: true,
        plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 } }, x: { ticks: { maxRotation: 0, autoSkipPadding: 12 } } },
      },
      plugins: [geometry],
    });
    charts.set('daily', chart);
  } else {
    chart.data.labels = labels;
    chart.data.datasets[0].data = data;
    chart.update();
  }
  const total = data.reduce((a, b) => a + b, 0);
  let peak = null;
  for (const d of days) if (!peak || d.count > peak.count) peak = d;
  canvas.setAttribute('aria-label', days.length
    ? 'Interactions per day from ' + labels[0] + ' to ' + labels[labels.length - 1] + ': ' + total + ' in all, peak ' +
      peak.count + ' on ' + peak.date
    : 'Interactions per day: none');
  table.innerHTML = '<thead><tr><th scope="col">Day</th><th scope="col" class="num">Count</th></tr></thead><tbody>' +
    days.map((d) => '<tr><td>' + d.date + '</td><td class="num">' + d.count + '</td></tr>').join('') + '</tbody>';
}

// PALETTE colours the datasets of a multi-series chart (one per model or
// percentile), distinguishable and readable on white.
const PALETTE = ['#2f6fdb', '#e07a1f', '#1f9e77', '#b83280', '#7a5af5', '#8a6d1f', '#5b6472'];

// series draws several datasets over the same labels: stacked (a day's
// tokens by model) or side by side (a model's latency percentiles). Its
// height is the stylesheet's, whatever the data: a panel drawn while the
// admin scrolls past never moves what is below it.
// datasets are [{label, data}]; format shows a value; summary is the
// canvas's text alternative (the caller fills the table).
export function series(name, labels, datasets, { stacked = false, horizontal = false, format = String, summary = '' }) {
  const canvas = document.getElementById('chart-' + name);
  const coloured = datasets.map((d, i) => ({ label: d.label, data: d.data, backgroundColor: d.color || PALETTE[i % PALETTE.length] }));
  let chart = charts.get(name);
  if (!chart) {
    const value = { beginAtZero: true, stacked, ticks: { callback: (v) => format(v) } };
    const category = { stacked, ticks: { maxRotation: 0, autoSkipPadding: 12 } };
    chart = new Chart(canvas, {
      type: 'bar',
      data: { labels, datasets: coloured },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        animation: false,
        maintainAspectRatio: false,
        responsive: true,
        plugins: {
          legend: { display: true, position: 'bottom', labels: { boxWidth: 12 } },
          tooltip: { callbacks: { label: (ctx) => ctx.dataset.label + ': ' + format(ctx.raw) } },
        },
        scales: horizontal ? { x: value, y: category } : { x: category, y: value },
      },
    });
    charts.set(name, chart);
  } else {
    chart.data.labels = labels;
    chart.data.datasets = coloured;
    chart.update();
  }
  canvas.setAttribute('aria-label', summary);
}

// table fills a data table: head is the column names (the first a row
// header), rows arrays of cells already formatted, or [text, value] to
// keep the exact value in data-v as well; columns after the first are
// numbers.
export function table(id, head, rows, empty = 'None.') {
  const el = document.getElementById(id);
  const cell = (c, i) => {
    const [text, v] = Array.isArray(c) ? c : [c, null];
    return '<td' + (i ? ' class="num"' : '') + (v === null || v === undefined ? '' : ' data-v="' + esc(v) + '"') + '>' + esc(text) + '</td>';
  };
  el.innerHTML = '<thead><tr>' + head.map((h, i) => '<th scope="col"' + (i ? ' class="num"' : '') + '>' + esc(h) + '</th>').join('') +
    '</tr></thead><tbody>' + (rows.length
    ? rows.map((r) => '<tr>' + r.map(cell).join('') + '</tr>').join('')
    : '<tr><td colspan="' + head.length + '" class="empty">' + esc(empty) + '</td></tr>') + '</tbody>';
}

export { esc };
