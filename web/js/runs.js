// The runs page: every run folder under `looplab serve --runs DIR` (GET /api/runs), and for the
// selected ones (GET /api/runs/NAME) their configs side by side, the training curves of
// metrics.jsonl, accuracy and convergence against iterations from eval.json, analysis.json, and
// test-time compute against difficulty from eval_scaling.json, overlaid. runs.html?runs=A,B selects A and B.
import { api, h, Plot, nav, rendered, showError, fmt, palette } from './lab.js';

const main = document.querySelector('main');
const cache = new Map();
let list = [];
const selected = new Set();
const el = {};
const plots = {};
const dashes = { val: undefined, hard: [8, 4], train: [2, 3] };

function newPlot(key, parent, height = 260) {
  const box = h('div', { class: 'plot', dataset: { plot: key } });
  parent.append(box);
  plots[key] = new Plot(box, { height });
}

function color(name) {
  return palette[list.findIndex(r => r.name === name) % palette.length];
}

async function load(name) {
  if (!cache.has(name)) cache.set(name, await api(`/api/runs/${encodeURIComponent(name)}`));
  return cache.get(name);
}

function flat(obj, prefix = '', out = {}) {
  for (const [k, v] of Object.entries(obj || {})) {
    if (v && typeof v === 'object' && !Array.isArray(v)) flat(v, `${prefix}${k}.`, out);
    else out[prefix + k] = Array.isArray(v) ? v.join(' × ') : v;
  }
  return out;
}

let showAll = false;

function configTable(runs) {
  const cols = runs.map(r => ({ ...flat(r.config), ...flat(r.training, 'training.') }));
  const differs = k => new Set(cols.map(c => JSON.stringify(c[k]))).size > 1;
  const all = [...new Set(cols.flatMap(c => Object.keys(c)))];
  // With several runs, the settings that differ first; the rest on request.
  const keys = runs.length > 1 && !showAll ? all.filter(differs) : all;
  return h('table', { class: 'config' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), runs.map(r => h('th', {}, h('span', { class: 'swatch', style: `background:${color(r.name)}` }), r.name)))),
    h('caption', {}, runs.length > 1 ? h('label', {}, h('input', { type: 'checkbox', name: 'show-all', checked: showAll,
      onchange: e => { showAll = e.target.checked; draw(); } }), ` show the ${all.length - all.filter(differs).length} settings that are the same in every selected run too`) : ''),
    h('tbody', {}, keys.map(k => h('tr', { class: differs(k) ? 'differs' : null }, h('th', {}, k), cols.map(c => h('td', {}, c[k] === undefined ? '–' : String(c[k])))))));
}

function metricsSeries(runs, key, opts = {}) {
  return runs.filter(r => Array.isArray(r.metrics)).map(r => ({
    name: opts.label ? opts.label(r) : r.name,
    x: r.metrics.map(m => m.epoch), y: r.metrics.map(m => (typeof m[key] === 'number' ? m[key] : null)),
    color: color(r.name), dash: opts.dash,
  }));
}

function evalSeries(runs, source, key, transform = v => v) {
  const out = [];
  for (const r of runs) {
    const e = source(r);
    if (!e || !e.splits) continue;
    for (const [split, s] of Object.entries(e.splits)) {
      if (!Array.isArray(s[key])) continue;
      out.push({ name: `${r.name} · ${split}`, x: s.iterations, y: s[key].map(transform), color: color(r.name), dash: split in dashes ? dashes[split] : [4, 2, 1, 2] });
    }
  }
  return out;
}

// eval_scaling.json: per run and halting rule, `key` of each level against its difficulty: log2
// of the bits for prefix sums (schema 1 files: of the size), the median rating of the level for
// the rated tasks (no halting: every example run max_iters, exact_at_max).
const ruleDashes = { none: [2, 3], learned: undefined, confidence: [8, 4], 'fixed-point': [4, 2, 1, 2] };
function scalingX(report, level) {
  const bits = !report.measure || report.measure === 'bits';
  const d = typeof level.difficulty === 'number' ? level.difficulty : level.size;
  return bits ? Math.log2(d) : d;
}
function scalingXLabel(runs) {
  const r = runs.find(u => u.scaling);
  const m = r && r.scaling.measure;
  return !m || m === 'bits' ? 'log2 size' : `median ${m}`;
}
function scalingSeries(runs, key) {
  const out = [];
  for (const r of runs) {
    const levels = r.scaling && r.scaling.levels;
    if (!Array.isArray(levels) || !levels.length) continue;
    const x = levels.map(l => scalingX(r.scaling, l));
    const rules = levels[0].result.rules.map(u => u.rule);
    if (key === 'exact') out.push({ name: `${r.name} · no halting`, x, y: levels.map(l => l.result.exact_at_max), color: color(r.name), dash: ruleDashes.none });
    for (const [i, rule] of rules.entries())
      out.push({ name: `${r.name} · ${rule}`, x, y: levels.map(l => (l.result.rules[i] ? l.result.rules[i][key] : null)), color: color(r.name), dash: ruleDashes[rule] });
  }
  return out;
}

function analysisTable(runs) {
  const rows = [];
  for (const r of runs) {
    if (!r.analysis || !r.analysis.splits) continue;
    const rho = r.analysis.recall_spectral_radius;
    for (const [split, s] of Object.entries(r.analysis.splits)) {
      const c = s.convergence || {}, o = s.overthinking || {}, d = s.detail || {};
      rows.push(h('tr', {}, h('td', {}, h('span', { class: 'swatch', style: `background:${color(r.name)}` }), r.name), h('td', {}, split),
        h('td', {}, Array.isArray(rho) && rho.length ? rho.map(v => fmt(v)).join(', ') : 'none'),
        ...['settle', 'cycle', 'diverge', 'wander'].map(k => h('td', {}, c[k] === undefined ? '–' : `${fmt(100 * c[k], 3)}%`)),
        h('td', {}, c.first_below ? fmt(c.first_below.median) : '–'),
        h('td', {}, d.radius ? `${fmt(d.radius.median)} (${fmt(100 * d.radius.fraction_below_1, 3)}% < 1)` : '–'),
        h('td', {}, o.training_iters !== undefined ? `${fmt(100 * o.exact_at_training_iters, 3)}% at ${o.training_iters}` : '–'),
        h('td', {}, o.best_exact !== undefined ? `${fmt(100 * o.best_exact, 3)}% at ${o.best_iteration}` : '–'),
        h('td', {}, o.exact_at_max_iters !== undefined ? `${fmt(100 * o.exact_at_max_iters, 3)}% at ${s.max_iters}` : '–')));
    }
  }
  if (!rows.length) return h('p', { class: 'note' }, 'None of the selected runs has an analysis.json; ', h('code', {}, 'looplab analyze DIR'), ' writes one.');
  return h('table', { class: 'wide' }, h('thead', {}, h('tr', {}, ...['run', 'split', 'ρ(Wx)', 'settle', 'cycle', 'diverge', 'wander',
    'first below tol (median)', 'spectral radius (median)', 'exact at training T', 'best exact', 'exact at max'].map(t => h('th', {}, t)))), h('tbody', {}, rows));
}

async function draw() {
  const runs = [];
  for (const name of list.map(r => r.name)) if (selected.has(name)) runs.push(await load(name));
  el.config.replaceChildren(runs.length ? configTable(runs) : h('p', { class: 'note' }, 'Select one or more runs above.'));
  const errors = runs.flatMap(r => Object.entries(r.errors || {}).map(([f, m]) => `${r.name}/${f}: ${m}`));
  el.errors.replaceChildren(...errors.map(e => h('li', {}, e)));
  plots.loss.update({ hideEmpty: true, title: 'Training loss', x_label: 'epoch', y_label: 'loss', series: metricsSeries(runs, 'loss') });
  plots.accuracy.update({ hideEmpty: true,
    title: 'Accuracy during training (val solid, train dashed)', x_label: 'epoch', y_label: 'exact accuracy', yRange: [0, 1.02],
    series: [...metricsSeries(runs, 'val_exact', { label: r => `${r.name} · val` }),
      ...metricsSeries(runs, 'train_exact', { label: r => `${r.name} · train`, dash: [8, 4] })],
  });
  plots.lr.update({ hideEmpty: true, title: 'Learning rate', x_label: 'epoch', y_label: 'lr', series: metricsSeries(runs, 'lr') });
  plots.seconds.update({ hideEmpty: true, title: 'Seconds per epoch', x_label: 'epoch', y_label: 's', series: metricsSeries(runs, 'seconds') });
  const untrained = runs.filter(r => !Array.isArray(r.metrics)).map(r => r.name);
  el.trainNote.replaceChildren(untrained.length ? h('p', { class: 'note' }, `No metrics.jsonl in ${untrained.join(', ')} (written by looplab train).`) : '');
  const evals = runs.filter(r => r.eval);
  el.evalNote.replaceChildren(evals.length === runs.length ? '' : h('p', { class: 'note' },
    `No eval.json in ${runs.filter(r => !r.eval).map(r => r.name).join(', ') || '–'}: `, h('code', {}, 'looplab eval DIR --split val,hard'), ' writes one.'));
  plots.exact.update({ hideEmpty: true, title: 'Exact accuracy against iterations (val solid, hard dashed)', x_label: 'iterations', y_label: 'exact accuracy', yRange: [0, 1.02], series: evalSeries(runs, r => r.eval, 'exact') });
  plots.per_position.update({ hideEmpty: true, title: 'Per-position accuracy against iterations', x_label: 'iterations', y_label: 'per-position accuracy', yRange: [0, 1.02], series: evalSeries(runs, r => r.eval, 'per_position') });
  plots.step.update({ hideEmpty: true, title: 'Relative step ‖x(t+1) − x(t)‖ / ‖x(t)‖', x_label: 'iterations', y_label: 'log10 relative step', series: evalSeries(runs, r => r.eval, 'relative_step', v => (v > 0 ? Math.log10(v) : null)) });
  plots.unchanged.update({ hideEmpty: true, title: 'Predictions that no longer change', x_label: 'iterations', y_label: 'fraction', yRange: [0, 1.02], series: evalSeries(runs, r => r.eval, 'unchanged') });
  el.analysis.replaceChildren(analysisTable(runs));
  plots.analysis.update({ hideEmpty: true, title: 'Exact accuracy against iterations (analysis.json)', x_label: 'iterations', y_label: 'exact accuracy', yRange: [0, 1.02],
    series: evalSeries(runs, r => r.analysis && { splits: Object.fromEntries(Object.entries(r.analysis.splits || {}).map(([k, s]) => [k, s.accuracy || {}])) }, 'exact') });
  const scaled = runs.filter(r => r.scaling);
  el.scalingNote.replaceChildren(scaled.length ? '' : h('p', { class: 'note' }, 'None of the selected runs has an eval_scaling.json; ', h('code', {}, 'looplab eval DIR --scaling'), ' writes one.'));
  plots.scaling_iters.update({ hideEmpty: true, title: 'Iterations spent against difficulty, per halting rule (eval_scaling.json)', x_label: scalingXLabel(runs), y_label: 'mean iterations', series: scalingSeries(runs, 'mean_iters') });
  plots.scaling_exact.update({ hideEmpty: true, title: 'Exact accuracy at the stop against difficulty', x_label: scalingXLabel(runs), y_label: 'exact accuracy', yRange: [0, 1.02], series: scalingSeries(runs, 'exact') });
  document.body.dataset.selected = [...selected].join(',');
  rendered();
}

function runList(j) {
  if (!j.exists) return h('p', { class: 'note' }, `The runs folder ${j.root} does not exist (give one with looplab serve --runs DIR).`);
  if (!j.runs.length) return h('p', { class: 'note' }, `No run folders in ${j.root}.`);
  return h('table', { class: 'runs' },
    h('thead', {}, h('tr', {}, ...['', 'run', 'task', 'recall', 'norm', 'width', 'epochs', 'best val accuracy', 'files'].map(t => h('th', {}, t)))),
    h('tbody', {}, j.runs.map(r => {
      const box = h('input', { type: 'checkbox', name: r.name, checked: selected.has(r.name), 'aria-label': `overlay ${r.name}` });
      box.addEventListener('change', () => { if (box.checked) selected.add(r.name); else selected.delete(r.name); draw().catch(e => showError(e.message)); });
      const c = r.config || {};
      return h('tr', {}, h('td', {}, box), h('td', {}, h('span', { class: 'swatch', style: `background:${color(r.name)}` }), r.name),
        h('td', {}, c.task || '–'), h('td', {}, c.recall || '–'), h('td', {}, c.norm || '–'), h('td', {}, c.width ?? '–'),
        h('td', {}, r.epochs), h('td', {}, r.best_val_exact === null ? '–' : `${fmt(100 * r.best_val_exact)}%`), h('td', {}, r.files.join(', ')));
    })));
}

main.append(nav('runs.html'), h('header', {}, h('h1', {}, 'Runs'),
  h('p', { class: 'lead' }, 'Every run folder under ', h('code', {}, 'looplab serve --runs DIR'), '; tick runs to overlay them.')),
el.list = h('section', {}),
h('section', {}, h('h2', {}, 'Configuration'), el.config = h('div', { class: 'scroll' }), el.errors = h('ul', { class: 'errors' })),
el.training = h('section', {}, h('h2', {}, 'Training curves (metrics.jsonl)'), el.trainNote = h('div')),
el.eval = h('section', {}, h('h2', {}, 'Accuracy and convergence against iterations (eval.json)'), el.evalNote = h('div')),
h('section', {}, h('h2', {}, 'Fixed-point analysis (analysis.json)'), el.analysis = h('div', { class: 'scroll' }), el.analysisPlot = h('div', { class: 'plots' })),
el.scaling = h('section', {}, h('h2', {}, 'Test-time compute against difficulty (eval_scaling.json)'), el.scalingNote = h('div')));
const grid = (parent) => { const g = h('div', { class: 'plots' }); parent.append(g); return g; };
const tg = grid(el.training);
for (const k of ['loss', 'accuracy', 'lr', 'seconds']) newPlot(k, tg);
const eg = grid(el.eval);
for (const k of ['exact', 'per_position', 'step', 'unchanged']) newPlot(k, eg);
newPlot('analysis', el.analysisPlot);
const sg = grid(el.scaling);
for (const k of ['scaling_iters', 'scaling_exact']) newPlot(k, sg);

try {
  const j = await api('/api/runs');
  list = j.runs;
  const want = new URLSearchParams(location.search).get('runs');
  for (const r of list) if (want ? want.split(',').includes(r.name) : selected.size < 4) selected.add(r.name);
  el.list.append(h('p', { class: 'meta' }, `Runs folder: ${j.root} `,
    h('button', { type: 'button', name: 'reload', onclick: () => { cache.clear(); draw().catch(e => showError(e.message)); } }, 'Reload the selected runs')),
  runList(j));
  await draw();
} catch (e) {
  showError(e.message);
  rendered();
}
