// Table 3: Gaussian draws projected onto each stability region, log-range and balance of the
// projected points against the paper's, from GET /api/anisotropy (`looplab analyze anisotropy`).
import { api, h, Plot, nav, latest, rendered, showError, fmt } from './lab.js';

const main = document.querySelector('main');
const inputs = {};
const out = {};
const box = h('div', { class: 'plot' });
const plot = new Plot(box, { height: 320 });

function query() {
  return new URLSearchParams(Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]))).toString();
}

const cell = (s, se = true) => `${fmt(s.mean)}${se ? ` ± ${fmt(s.standard_error, 2)}` : ''}`;
const mark = ok => h('span', { class: ok ? 'ok' : 'bad' }, ok ? ' ✓' : ' ✗');

function draw(r) {
  out.meta.textContent = `n = ${r.n} draws per sigma, seed ${r.seed}; ${r.rng}`;
  out.rows.replaceChildren(...r.rows.map(row => {
    const p = row.paper, c = row.comparison;
    return h('tr', { dataset: { sigma: row.sigma, placement: row.placement } },
      h('td', {}, row.sigma), h('td', {}, row.placement),
      h('td', { dataset: { readout: 'log_range_mean' } }, cell(row.log_range)), h('td', {}, fmt(row.log_range.median)),
      h('td', {}, p ? [cell(p.log_range), mark(c.log_range_mean_match), ` z = ${fmt(c.log_range_mean_z, 2)}`] : '–'),
      h('td', {}, p ? [fmt(p.log_range.median), mark(c.log_range_median_match)] : '–'),
      h('td', {}, cell(row.balance)), h('td', {}, fmt(row.balance.median)),
      h('td', {}, p ? [cell(p.balance), mark(c.balance_mean_match), ` z = ${fmt(c.balance_mean_z, 2)}`] : '–'),
      h('td', {}, p ? [fmt(p.balance.median), mark(c.balance_median_match)] : '–'),
      h('td', {}, `${fmt(100 * row.inside_fraction, 3)}%`), h('td', {}, `${fmt(100 * row.on_axis_fraction, 3)}%`), h('td', {}, fmt(row.mean_distance)));
  }));
  const series = [];
  for (const placement of ['internal', 'external']) {
    const rows = r.rows.filter(x => x.placement === placement);
    series.push({ name: `${placement} (ours)`, x: rows.map(x => x.sigma), y: rows.map(x => x.log_range.mean), color: placement === 'internal' ? '#4285f4' : '#f4a024', width: 3 });
    const paper = rows.filter(x => x.paper);
    series.push({ name: `${placement} (paper)`, x: paper.map(x => x.sigma), y: paper.map(x => x.paper.log_range.mean), color: placement === 'internal' ? '#1a3d7a' : '#8a5300', dash: [6, 4] });
  }
  plot.update({ title: 'Mean log-range of the projected points against sigma', x_label: 'sigma', y_label: 'mean |log(|x|/|y|)|', series });
}

const update = latest(() => api(`/api/anisotropy?${query()}`), draw);

function field(name, label, value, attrs) {
  const input = h('input', { name, value, 'aria-label': label, ...attrs });
  input.addEventListener('change', update);
  inputs[name] = input;
  return h('label', { class: 'control' }, h('span', { class: 'label' }, label, ' ', h('code', {}, name)), input);
}

main.append(nav('anisotropy.html'),
  h('header', {}, h('h1', {}, 'Anisotropy of projected points (table 3)'),
    h('p', { class: 'lead' }, 'Points drawn from N(0, σ²I) are projected exactly onto each stability region; the log-range ',
      '|log(|x|/|y|)| and the balance min/max of the projected point measure how lopsided the region forces the two ',
      'eigenvalues to be. Our numbers against the paper\'s (✓ within 3 standard errors for means, 5% for medians). ',
      'docs/analysis.md explains every difference.')),
  h('section', { class: 'controls' }, h('h2', {}, 'Experiment'),
    field('n', 'draws per sigma', '10000', { type: 'number', min: 2, max: 100000, step: 1 }),
    field('sigma', 'sigmas (comma-separated)', '0.5,1,2,4', { type: 'text' }),
    field('seed', 'seed', '0', { type: 'number', min: 0, step: 1 })),
  out.meta = h('p', { class: 'meta' }),
  h('section', {}, h('table', { class: 'wide' },
    h('thead', {}, h('tr', {}, ...['sigma', 'region', 'log-range mean', 'median', 'paper mean', 'paper median', 'balance mean', 'median',
      'paper mean', 'paper median', 'inside', 'on an axis', 'mean distance moved'].map(t => h('th', {}, t)))),
    out.rows = h('tbody'))),
  h('section', { class: 'plots single' }, box));
try {
  draw(await api(`/api/anisotropy?${query()}`));
  rendered();
} catch (e) {
  showError(e.message);
  rendered();
}
