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
