// Charts with Chart.js, each with a text alternative: an aria-label
// summary on the canvas and a data table whose buttons do what clicking a
// bar does, for keyboard users. The summary, the table and the chart's
// height are set at once; the chart itself is drawn when its box comes
// into view (whenShown), Chart.js being a chunk of its own (chartjs.js)
// imported then: the first view paints its numbers and tables without
// evaluating Chart.js, and a chart below the fold costs nothing until the
// admin scrolls to it.
import { nextTask } from './lazy.js';
// The value axes are labelled by fmt.js rather than by Chart.js, whose
// labels use Intl: its first use loads locale data, which would lengthen
// the first chart's task.
import { count } from './fmt.js';

// CHARTJS_URL is the Chart.js chunk's address, /ui/chartjs.<hash>.js
// (build.mjs defines it).
/* global CHARTJS_URL */
// charts holds the Chart of each name, once drawn.
const charts = new Map();
// specs holds each chart's latest data and options, drawn or waiting.
const specs = new Map();
const ACCENT = '#2f6fdb';
const ACTIVE = '#e07a1f';

let lib = null;

// chartjs imports the Chart.js chunk once (again after a failure).
function chartjs() {
  if (!lib) lib = import(CHARTJS_URL).then((m) => m.Chart, (e) => { lib = null; throw e; });
  return lib;
}

// prefetchCharts has the browser fetch the Chart.js chunk, at low
// priority and without running it, so that scrolling to a chart does not
// wait for the network.
export function prefetchCharts() {
  if (document.querySelector('link[data-chartjs]')) return;
  const link = document.createElement('link');
  link.rel = 'prefetch';
  link.href = CHARTJS_URL;
  link.dataset.chartjs = 'true';
  document.head.appendChild(link);
}

// geometry records where each bar of the first dataset is drawn (CSS
// pixels, relative to the canvas) in data-bars, so tests and tools can
// point at a bar; data-drawn says the chart shows its latest data.
const geometry = {
  id: 'geometry',
  afterRender(chart) {
    const name = chart.canvas.id.slice('chart-'.length);
    const items = specs.get(name) && specs.get(name).shown;
    const meta = chart.getDatasetMeta(0);
    const horizontal = chart.options.indexAxis === 'y';
    const bars = meta.data.map((el, i) => {
      const p = el.tooltipPosition();
      const x = horizontal ? (p.x + el.base) / 2 : p.x;
      const y = horizontal ? p.y : (p.y + el.base) / 2;
      return { key: items ? items[i].key : chart.data.labels[i], x: Math.round(x), y: Math.round(y) };
    });
    chart.canvas.dataset.bars = JSON.stringify(bars);
  },
};

// queue runs the drawings in turn.
let queue = Promise.resolve();

// SHOWN is the share of a chart's box that must be in the viewport for it
// to be drawn: a chart whose top edge only shows at the bottom of the
// first view (a phone's) is drawn when the admin scrolls, not during the
// load.
const SHOWN = 0.2;
const waiting = new Map();
let shownObserver = null;

// whenShown runs fn once SHOWN of box is in the viewport (the latest fn
// given for box, once).
function whenShown(box, fn) {
  if (!('IntersectionObserver' in window)) { fn(); return; }
  if (!shownObserver) {
    shownObserver = new IntersectionObserver((entries) => {
      for (const e of entries) {
        const run = waiting.get(e.target);
        if (!run || e.intersectionRatio < SHOWN) continue;
        waiting.delete(e.target);
        shownObserver.unobserve(e.target);
        run();
      }
    }, { threshold: [0, SHOWN] });
  }
  waiting.set(box, fn);
  // Observing anew reports where box is now, in view already or not.
  shownObserver.unobserve(box);
  shownObserver.observe(box);
}

// draw shows spec ({labels, datasets, options, items, onPick}) in chart
// name once its box is in view: at once when it is, else when the admin
// scrolls to it. Charts are drawn one a task, so that no long
// task holds the page.
function draw(name, spec) {
  const canvas = document.getElementById('chart-' + name);
  specs.set(name, spec);
  delete canvas.dataset.drawn;
  delete canvas.dataset.bars;
  whenShown(canvas.parentElement, () => {
    queue = queue.then(() => render(name, canvas)).catch((e) => failed(canvas, e));
  });
}

async function render(name, canvas) {
  const Chart = await chartjs();
  await nextTask();
  const spec = specs.get(name);
  if (spec.drawn) return;
  spec.drawn = true;
  spec.shown = spec.items;
  let chart = charts.get(name);
  if (!chart) {
    chart = new Chart(canvas, { type: 'bar', data: { labels: spec.labels, datasets: spec.datasets }, options: spec.options, plugins: [geometry] });
    charts.set(name, chart);
  } else {
    chart.data.labels = spec.labels;
    chart.data.datasets = spec.datasets;
    chart.update();
  }
  const note = canvas.parentElement.querySelector('.chart-error');
  if (note) note.remove();
  canvas.dataset.drawn = 'true';
}

// failed says in the chart's place that it could not be drawn (the
// Chart.js chunk did not load: a new version was deployed meanwhile, or
// the network failed); its table still has the data.
function failed(canvas, e) {
  let note = canvas.parentElement.querySelector('.chart-error');
  if (!note) {
    note = document.createElement('p');
    note.className = 'chart-error error';
    canvas.parentElement.appendChild(note);
  }
  note.textContent = 'The chart could not be drawn (' + e.message + '). Reload the page to try again; its table has the data.';
}

// shown returns the items drawn in chart name, for its tooltips and clicks.
const shown = (name) => specs.get(name).shown;

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
  canvas.parentElement.style.height = Math.max(120, 28 * items.length + 40) + 'px';
  draw(name, {
    items,
    labels: items.map((i) => short(i.label)),
    datasets: [{ label: what, data: items.map((i) => i.count), backgroundColor: items.map((i) => (active.includes(i.key) ? ACTIVE : ACCENT)) }],
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
              const it = shown(name)[ctx.dataIndex];
              return it.count + (it.pct !== undefined ? ' (' + it.pct + '%)' : '');
            },
          },
        },
      },
      // Every bar has its label (28px each): nothing to skip, and no
      // measuring to find what to skip.
      scales: { x: { beginAtZero: true, ticks: { precision: 0, callback: count } }, y: { ticks: { autoSkip: false } } },
      onClick: (_, elements) => {
        if (elements.length) specs.get(name).onPick(shown(name)[elements[0].index].key);
      },
      onHover: (evt, elements) => { evt.native.target.style.cursor = elements.length ? 'pointer' : 'default'; },
    },
    onPick,
  });
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
  draw('daily', {
    labels,
    datasets: [{ label: 'Interactions', data, backgroundColor: ACCENT }],
    options: {
      animation: false,
      maintainAspectRatio: false,
      responsive: true,
      plugins: { legend: { display: false } },
      scales: { y: { beginAtZero: true, ticks: { precision: 0, callback: count } }, x: { ticks: { maxRotation: 0, autoSkipPadding: 12 } } },
    },
  });
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
  const value = { beginAtZero: true, stacked, ticks: { callback: (v) => format(v) } };
  const category = { stacked, ticks: { maxRotation: 0, autoSkipPadding: 12 } };
  draw(name, {
    labels,
    datasets: datasets.map((d, i) => ({ label: d.label, data: d.data, backgroundColor: d.color || PALETTE[i % PALETTE.length] })),
    // The options of the chart's first drawing stay: a chart's kind and
    // format do not change.
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
