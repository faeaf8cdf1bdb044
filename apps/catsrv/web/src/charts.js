// Charts with Chart.js (only the parts used, bundled: no CDN), each with a
// text alternative: an aria-label summary on the canvas and a data table
// whose buttons do what clicking a bar does, for keyboard users.
import {
  Chart, BarController, BarElement, CategoryScale, LinearScale, Tooltip,
} from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip);

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

export { esc };
