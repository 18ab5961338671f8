// Figure 2: trajectories of (x, y) -> (lx x, ly y) from a ring of starts, with each one's fate
// and the fixed point's type, from GET /api/phase (`looplab analyze phase --json`).
import { api, h, tex, Plot, nav, slider, latest, rendered, showError, fmt } from './lab.js';

const main = document.querySelector('main');
const fateColor = { converges: '#2ca02c', diverges: '#d62728', 'stable-manifold': '#1f77b4', neutral: '#7f7f7f' };
const inputs = {};
const out = {};
const box = h('div', { class: 'plot square' });
const plot = new Plot(box, { height: 520 });

function query() {
  return new URLSearchParams(Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]))).toString();
}

function draw(p) {
  out.fixed.textContent = p.fixed_point;
  const counts = {};
  for (const t of p.trajectories) counts[t.fate] = (counts[t.fate] || 0) + 1;
  out.fates.textContent = Object.entries(counts).map(([f, n]) => `${n} ${f}`).join(', ');
  out.map.replaceChildren(tex(String.raw`(x, y) \mapsto (${p.lx}\,x,\; ${p.ly}\,y)`, true));
  const r = 2.5 * p.radius;
  plot.update({
    title: `Trajectories, ${p.steps} steps from ${p.trajectories.length} starts (fixed point: ${p.fixed_point})`,
    x_label: 'x', y_label: 'y', xRange: [-r, r], yRange: [-r, r], legend: false,
    series: p.trajectories.map(t => ({ name: t.fate, x: t.points.map(q => q[0]), y: t.points.map(q => q[1]), color: fateColor[t.fate], width: 1.5 })),
  });
  out.table.replaceChildren(...p.trajectories.map((t, i) => {
    const last = t.points[t.points.length - 1];
    return h('tr', {}, h('td', {}, i), h('td', {}, `(${fmt(t.start[0], 3)}, ${fmt(t.start[1], 3)})`),
      h('td', {}, h('span', { class: 'swatch', style: `background:${fateColor[t.fate]}` }), t.fate),
      h('td', {}, `(${fmt(last[0])}, ${fmt(last[1])}) after ${t.points.length - 1} steps${t.escaped ? ', escaped' : ''}`));
  }));
}

const update = latest(() => api(`/api/phase?${query()}`), draw);

function set(lx, ly) {
  inputs.lx.value = lx;
  inputs.ly.value = ly;
  for (const k of ['lx', 'ly']) inputs[k].dispatchEvent(new Event('input'));
}

main.append(nav('phase.html'),
  h('header', {}, h('h1', {}, 'Phase portraits (figure 2)'),
    h('p', { class: 'lead' }, 'Near a fixed point a looped model is its linearization. With two eigen-directions the ',
      'iteration scales each coordinate by its eigenvalue; the fixed point attracts only along directions whose eigenvalue has ',
      'size below one. Computed by the engine of ', h('code', {}, 'looplab analyze phase'), '.')),
  out.map = h('section', { class: 'equations' }),
  h('section', { class: 'controls' }, h('h2', {}, 'Eigenvalues and starts'), ...[
    ['lx', 'eigenvalue along x', -2, 2, 0.05, 0.5], ['ly', 'eigenvalue along y', -2, 2, 0.05, 1.5],
    ['steps', 'iterations', 1, 200, 1, 30], ['starts', 'starting points', 1, 64, 1, 16], ['radius', 'radius of the starts', 0.1, 5, 0.1, 1],
  ].map(([name, label, min, max, step, value]) => {
    const c = slider({ name, label, min, max, step, value, onInput: update });
    inputs[name] = c.input;
    return h('div', { class: 'param' }, c.el);
  }),
  h('p', { class: 'presets' }, 'Figure 2: ',
    h('button', { type: 'button', onclick: () => set(0.5, 0.8) }, '(a) attracting: 0.5, 0.8'), ' ',
    h('button', { type: 'button', onclick: () => set(0.5, 1.5) }, '(b) saddle: 0.5, 1.5'), ' ',
    h('button', { type: 'button', onclick: () => set(1.2, 1.5) }, '(c) repelling: 1.2, 1.5'))),
  h('section', { class: 'readouts' }, h('h2', {}, 'Readouts'), h('dl', {},
    h('dt', {}, 'fixed point (0, 0)'), out.fixed = h('dd', { dataset: { readout: 'fixed_point' } }),
    h('dt', {}, 'fates of the trajectories'), out.fates = h('dd', { dataset: { readout: 'fates' } })),
    h('p', { class: 'legend' }, Object.entries(fateColor).map(([f, c]) => h('span', {}, h('span', { class: 'swatch', style: `background:${c}` }), f, ' ')))),
  h('section', { class: 'plots single' }, box),
  h('section', {}, h('h2', {}, 'Trajectories'), h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, '#'), h('th', {}, 'start'), h('th', {}, 'fate'), h('th', {}, 'last point'))),
    out.table = h('tbody'))),
  h('section', {}, h('h2', {}, 'Fates'), h('ul', {},
    h('li', {}, h('b', {}, 'converges'), ': every coordinate that starts non-zero has |λ| < 1.'),
    h('li', {}, h('b', {}, 'diverges'), ': some coordinate that starts non-zero has |λ| > 1.'),
    h('li', {}, h('b', {}, 'stable-manifold'), ': converges although the other eigenvalue has |λ| > 1 (a saddle\'s stable axis, the only starts that reach the fixed point).'),
    h('li', {}, h('b', {}, 'neutral'), ': a coordinate with |λ| = 1 starts non-zero and none with |λ| > 1 does.'))));
try {
  draw(await api(`/api/phase?${query()}`));
  rendered();
} catch (e) {
  showError(e.message);
  rendered();
}
