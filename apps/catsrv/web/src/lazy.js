// whenVisible runs fn once el is near the viewport (the latest fn given for
// el, once): panels below the fold are drawn, and their requests made,
// when the admin scrolls to them, so the first load does only what it
// shows.
const MARGIN = 200;
const pending = new Map();
let observer = null;

function run(el) {
  const fn = pending.get(el);
  pending.delete(el);
  if (fn) fn();
}

export function whenVisible(el, fn) {
  if (!('IntersectionObserver' in window)) { fn(); return; }
  const known = pending.has(el) || el.dataset.observed === 'true';
  pending.set(el, fn);
  if (!observer) {
    observer = new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting) run(e.target);
    }, { rootMargin: MARGIN + 'px' });
  }
  if (!known) {
    el.dataset.observed = 'true';
    observer.observe(el);
    return;
  }
  // Observed already and in view: the observer calls only on a change.
  const r = el.getBoundingClientRect();
  if (r.height > 0 && r.top < innerHeight + MARGIN && r.bottom > -MARGIN) run(el);
}

// nextTask resolves in a task of its own, so that work split by it runs
// as several short tasks and the page stays responsive between them.
export function nextTask() {
  if (window.scheduler && typeof window.scheduler.yield === 'function') return window.scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// IDLE_MS is how long idle() waits for the browser to be idle at most.
const IDLE_MS = 1000;

// idle resolves once the browser is idle, which is after it has painted
// what was just rendered (at most IDLE_MS later): for what the first view
// can do without.
export function idle() {
  return new Promise((resolve) => {
    if ('requestIdleCallback' in window) requestIdleCallback(() => resolve(), { timeout: IDLE_MS });
    else setTimeout(resolve, 0);
  });
}
