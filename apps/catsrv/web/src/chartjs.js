// The Chart.js chunk: only the parts the charts use, registered. build.mjs
// builds it apart from the page's script (chartjs.<hash>.js, an ES module)
// and charts.js imports it when the first chart comes into view, so the
// first view paints its numbers without evaluating Chart.js.
import {
  Chart, BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend,
} from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

export { Chart };
