// Figure 5: where external recall |(1 + lh) lg| < 1 and internal recall |1 + lg lh| < 1 are
// stable, as the grid of GET /api/regions (`looplab analyze regions --json`) over an adjustable box.
import { api, h, tex, Plot, nav, slider, latest, rendered, showError, fmt } from './lab.js';

const main = document.querySelector('main');
const colors = { both: [123, 63, 160], internal: [66, 133, 244], external: [244, 160, 36] };
const css = c => `rgb(${c.join(',')})`;
const inputs = {};
const box = h('div', { class: 'plot' });
const plot = new Plot(box, { height: 520 });
const out = {};

function query() {
  return new URLSearchParams(Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]))).toString();
}

// The grid as an image: one pixel per grid point, row ymax at the top.
function underlay(g) {
  const n = g.n;
  const img = new ImageData(n, n);
  for (let iy = 0; iy < n; ++iy)
    for (let ix = 0; ix < n; ++ix) {
      const a = g.internal[iy][ix], b = g.external[iy][ix];
      const c = a && b ? colors.both : a ? colors.internal : b ? colors.external : null;
      if (!c) continue;
      const o = ((n - 1 - iy) * n + ix) * 4;
      img.data.set([...c, 255], o);
    }
  const canvas = document.createElement('canvas');
  canvas.width = n;
  canvas.height = n;
  canvas.getContext('2d').putImageData(img, 0, 0);
  return (u, ctx) => {
    const { xmin, xmax, ymin, ymax } = g.box;
    const dx = n > 1 ? (xmax - xmin) / (n - 1) / 2 : (xmax - xmin) / 2, dy = n > 1 ? (ymax - ymin) / (n - 1) / 2 : (ymax - ymin) / 2;
    const x0 = u.valToPos(xmin - dx, 'x', true), x1 = u.valToPos(xmax + dx, 'x', true);
    const y0 = u.valToPos(ymax + dy, 'y', true), y1 = u.valToPos(ymin - dy, 'y', true);
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(canvas, x0, y0, x1 - x0, y1 - y0);
    ctx.restore();
  };
}

function draw(g) {
  out.internal.textContent = `${fmt(100 * g.internal_fraction)}%`;
  out.external.textContent = `${fmt(100 * g.external_fraction)}%`;
  out.both.textContent = `${fmt(100 * g.both_fraction)}%`;
  out.grid.textContent = `${g.n} × ${g.n}`;
  plot.update({
    title: 'Stability regions of the scalar model',
    x_label: `x = ${g.x_axis}`, y_label: `y = ${g.y_axis}`,
    series: [], xRange: [g.box.xmin, g.box.xmax], yRange: [g.box.ymin, g.box.ymax], underlay: underlay(g),
  });
}

const update = latest(() => api(`/api/regions?${query()}`), draw);

main.append(nav('regions.html'),
  h('header', {}, h('h1', {}, 'Stability regions (figure 5)'),
    h('p', { class: 'lead' }, 'In the paper\'s one-layer scalar model the recall Jacobian (eigenvalue lg) and the sublayer ',
      'Jacobian (eigenvalue lh) share eigenvectors, so stability is a condition on two numbers. ',
      'Each grid point is tested by the engine of ', h('code', {}, 'looplab analyze regions'), '.')),
  h('section', { class: 'equations' },
    tex(String.raw`\text{external recall stable} \iff |(1+\lambda_h)\,\lambda_g| < 1 \qquad \text{internal recall stable} \iff |1+\lambda_g\lambda_h| < 1`, true)),
  h('section', { class: 'controls' }, h('h2', {}, 'Box and grid'), ...[
    ['xmin', 'left edge (lg)', -20, 0, 0.5, -10], ['xmax', 'right edge (lg)', 0, 20, 0.5, 10],
    ['ymin', 'bottom edge (lh)', -12, 0, 0.5, -6], ['ymax', 'top edge (lh)', 0, 12, 0.5, 6],
    ['n', 'grid points per axis', 11, 401, 10, 201],
  ].map(([name, label, min, max, step, value]) => {
    const c = slider({ name, label, min, max, step, value, onInput: update });
    inputs[name] = c.input;
    return h('div', { class: 'param' }, c.el);
  })),
  h('section', { class: 'readouts' }, h('h2', {}, 'Share of the grid'), h('dl', {},
    h('dt', {}, h('span', { class: 'swatch', style: `background:${css(colors.internal)}` }), 'internal recall stable'), out.internal = h('dd', { dataset: { readout: 'internal_fraction' } }),
    h('dt', {}, h('span', { class: 'swatch', style: `background:${css(colors.external)}` }), 'external recall stable'), out.external = h('dd', { dataset: { readout: 'external_fraction' } }),
    h('dt', {}, h('span', { class: 'swatch', style: `background:${css(colors.both)}` }), 'both'), out.both = h('dd', { dataset: { readout: 'both_fraction' } }),
    h('dt', {}, 'grid'), out.grid = h('dd', { dataset: { readout: 'n' } }))),
  h('section', { class: 'plots single' }, box),
  h('section', {}, h('h2', {}, 'Reading the figure'),
    h('p', {}, 'Internal recall is stable only in a thin band: between the axes and the hyperbola ', tex('\\lambda_g\\lambda_h = -2'),
      ' in the second and fourth quadrants. External recall is stable around the singular line ', tex('\\lambda_h = -1'),
      ', between the hyperbolas ', tex('\\lambda_g(1+\\lambda_h) = \\pm 1'), ', which lets it tolerate large sublayer gains as long as the recall gain is small. ',
      'See docs/analysis.md for the exact projection onto these regions.')));
try {
  draw(await api(`/api/regions?${query()}`));
  rendered();
} catch (e) {
  showError(e.message);
  rendered();
}
