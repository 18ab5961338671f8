// Shared helpers of the web lab's pages: the API, DOM building, TeX, and plots (uPlot, in its
// x-y mode so that every series has its own x values and may run in any direction). Nothing here
// computes what the engines compute: the pages draw the numbers the server sends.
/* global uPlot, katex */

export async function api(path) {
  const r = await fetch(path);
  let body;
  try {
    body = await r.json();
  } catch {
    throw new Error(`${path}: HTTP ${r.status}`);
  }
  if (!r.ok) throw new Error(body && body.error ? body.error : `${path}: HTTP ${r.status}`);
  return body;
}

// h('div', {class: 'x', onclick: f}, child, 'text', ...)
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

export function tex(src, display = false) {
  const el = h(display ? 'div' : 'span', { class: display ? 'tex display' : 'tex' });
  katex.render(src, el, { throwOnError: false, displayMode: display });
  return el;
}

export function showError(message) {
  let el = document.getElementById('error');
  if (!el) {
    el = h('div', { id: 'error', role: 'alert' });
    document.querySelector('main').prepend(el);
  }
  el.textContent = message;
  el.hidden = !message;
}

// A question whose answer is shown on request.
export function reveal(title, question, answer, key) {
  const ans = h('div', { class: 'answer', hidden: true, dataset: { answer: key } }, answer);
  const button = h('button', {
    type: 'button', dataset: { reveal: key },
    onclick: () => { ans.hidden = !ans.hidden; button.textContent = ans.hidden ? 'Reveal the answer' : 'Hide the answer'; },
  }, 'Reveal the answer');
  return h('section', { class: `question ${key}` }, h('h2', {}, title), h('p', {}, question), button, ans);
}

export const palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];

function finiteRange(values, pad) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) { const d = Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 1; return [lo - d, hi + d]; }
  const d = (hi - lo) * pad;
  return [lo - d, hi + d];
}

// Tick labels with up to 4 significant digits (uPlot's default shows 0.0002 as 0).
const ticks = (u, vals) => vals.map(v => (v === null ? '' : Math.abs(v) < 1e-12 ? '0' : String(+v.toPrecision(4))));

// Every Plot on the page, in creation order (the end-to-end tests read what is drawn from here).
window.lab = window.lab || { plots: [] };

const finiteCount = s => s.y.filter(v => v !== null && Number.isFinite(v)).length;

// A chart in `container`; update({title, x_label, y_label, series: [{name, x, y, color, dash,
// width}], xRange, yRange, underlay(u, ctx)}) redraws it.
export class Plot {
  constructor(container, { height = 300 } = {}) {
    this.container = container;
    this.height = height;
    this.u = null;
    this.spec = null;
    window.lab.plots.push(this);
    window.addEventListener('resize', () => { if (this.u) this.u.setSize(this.size()); });
  }
  size() {
    return { width: Math.max(280, this.container.clientWidth || 480), height: this.height };
  }
  // What is drawn: [[x...], [y...]] per series.
  data() {
    return this.u ? this.u.data.slice(1).map(([x, y]) => [Array.from(x), Array.from(y)]) : [];
  }
  update(spec) {
    this.spec = spec;
    // A plot with nothing to draw is hidden when the page asks for it (spec.hideEmpty).
    this.container.hidden = !!spec.hideEmpty && spec.series.every(s => !s.x.length);
    const series = spec.series.length ? spec.series : [{ name: '', x: [], y: [] }];
    const xr = spec.xRange || finiteRange(series.flatMap(s => s.x), 0);
    const yr = spec.yRange || finiteRange(series.flatMap(s => s.y), 0.05);
    const clean = a => a.map(v => (v === null || !Number.isFinite(v) ? null : v));
    const opts = {
      mode: 2,
      title: spec.title || '',
      ...this.size(),
      scales: { x: { time: false, range: () => xr }, y: { range: () => yr } },
      axes: [{ label: spec.x_label || '', values: ticks }, { label: spec.y_label || '', values: ticks, size: 60 }],
      legend: { show: spec.series.length > 0 && spec.legend !== false, live: false },
      cursor: { show: false },
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.name,
          stroke: s.color || palette[i % palette.length],
          width: s.width || 2,
          dash: s.dash,
          // A line needs two points: a series of one (an evaluation at one iteration count) is
          // drawn as a dot.
          paths: finiteCount(s) === 1 ? uPlot.paths.points() : uPlot.paths.linear(),
          points: { show: false, size: 10, fill: s.color || palette[i % palette.length] },
          facets: [{ scale: 'x', auto: false }, { scale: 'y', auto: false }],
        })),
      ],
      hooks: spec.underlay ? { drawClear: [u => spec.underlay(u, u.ctx)] } : {},
    };
    const data = [null, ...series.map(s => [clean(s.x), clean(s.y)])];
    if (this.u) this.u.destroy();
    this.u = new uPlot(opts, data, this.container);
  }
}

// "0.1" style text for a number, short.
export function fmt(v, digits = 4) {
  if (v === null || v === undefined) return '–';
  if (typeof v !== 'number') return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(digits - 1);
  return String(Number(v.toPrecision(digits)));
}

// Marks the page as ready for tests: body[data-updates] counts completed renders.
export function rendered() {
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

export function nav(active) {
  const links = [['index.html', 'Illustrations'], ['regions.html', 'Stability regions'], ['anisotropy.html', 'Anisotropy'],
    ['phase.html', 'Phase portraits'], ['runs.html', 'Runs'], ['sweeps.html', 'Sweeps']];
  return h('nav', {}, h('a', { href: 'index.html', class: 'brand' }, 'looplab'),
    links.map(([href, text]) => h('a', { href, class: href === active ? 'active' : null }, text)));
}

// A labelled slider; onInput(valueText) on every move. Returns {el, input}.
export function slider({ name, label, min, max, step, value, onInput }) {
  const out = h('output', { dataset: { param: name } }, String(value));
  const input = h('input', { type: 'range', name, min, max, step, value: String(value), 'aria-label': label || name });
  input.addEventListener('input', () => { out.textContent = input.value; onInput(input.value); });
  return { el: h('label', { class: 'control' }, h('span', { class: 'label' }, label || name, ' ', h('code', {}, name)), input, out), input };
}

export function select({ name, label, choices, value, onInput }) {
  const input = h('select', { name, 'aria-label': label || name }, choices.map(c => h('option', { value: c, selected: c === value }, c)));
  input.addEventListener('input', () => onInput(input.value));
  return { el: h('label', { class: 'control' }, h('span', { class: 'label' }, label || name, ' ', h('code', {}, name)), input), input };
}

// Runs fetches so that only the latest answer is drawn (slider moves come faster than answers).
export function latest(fetcher, draw) {
  let seq = 0;
  return async (...args) => {
    const mine = ++seq;
    try {
      const result = await fetcher(...args);
      if (mine !== seq) return;
      showError('');
      draw(result);
      rendered();
    } catch (e) {
      if (mine === seq) showError(e.message);
    }
  };
}
