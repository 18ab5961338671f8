// The runs page: every run folder under `looplab serve --runs DIR` (GET /api/runs) with its final
// val accuracy (the best beside it), its evaluations' val and hard figures and the paper's values
// for its configuration; and for the selected ones (GET /api/runs/NAME) their settings side by
// side (as the library reads them: one row per setting, whatever schema the files were written
// in), the training curves of metrics.jsonl, accuracy and convergence against iterations from
// every evaluation file (eval.json, eval-NAME.json) with the weights each used, analysis.json,
// and test-time compute against difficulty from eval_scaling.json, overlaid; for a maze run with
// an eval_trace.json, the traced mazes and the model's path after every iteration.
// runs.html?runs=A,B selects A and B.
import { api, h, Plot, nav, rendered, showError, fmt, palette, slider, select } from './lab.js';

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

// One column per run: its settings (model.*, train.*, data.*) and the schema versions its files
// were written in.
function settingsOf(r) {
  const versions = Object.fromEntries(Object.entries(r.schema_versions || {}).map(([f, v]) => [`${f} schema version`, v]));
  return { ...flat(r.settings), ...versions };
}

function configTable(runs) {
  const cols = runs.map(settingsOf);
  const differs = k => new Set(cols.map(c => JSON.stringify(c[k]))).size > 1;
  const all = [...new Set(cols.flatMap(c => Object.keys(c)))];
  // With several runs, the settings that differ first; the rest on request.
  const keys = runs.length > 1 && !showAll ? all.filter(differs) : all;
  return h('table', { class: 'config' },
    h('thead', {}, h('tr', {}, h('th', {}, ''), runs.map(r => h('th', {}, h('span', { class: 'swatch', style: `background:${color(r.name)}` }), r.name)))),
    h('caption', {}, runs.length > 1 ? h('label', {}, h('input', { type: 'checkbox', name: 'show-all', checked: showAll,
      onchange: e => { showAll = e.target.checked; draw(); } }), ` show the ${all.length - all.filter(differs).length} settings that are the same in every selected run too`) : ''),
    h('tbody', {}, keys.map(k => h('tr', { class: differs(k) ? 'differs' : null, dataset: { setting: k } }, h('th', {}, k), cols.map(c => h('td', {}, c[k] === undefined ? '–' : String(c[k])))))));
}

function metricsSeries(runs, key, opts = {}) {
  return runs.filter(r => Array.isArray(r.metrics)).map(r => ({
    name: opts.label ? opts.label(r) : r.name,
    x: r.metrics.map(m => m.epoch), y: r.metrics.map(m => (typeof m[key] === 'number' ? m[key] : null)),
    color: color(r.name), dash: opts.dash,
  }));
}

// Every evaluation of each run (eval.json, eval-NAME.json): one series per file and split.
function evaluationsOf(r) {
  return (r.evaluations || []).map(e => ({ ...e, label: e.file === 'eval.json' ? '' : ` (${e.file})` }));
}

function evalSeries(runs, source, key, transform = v => v) {
  const out = [];
  for (const r of runs) {
    for (const e of source(r)) {
      if (!e || !e.splits) continue;
      for (const [split, s] of Object.entries(e.splits)) {
        if (!Array.isArray(s[key])) continue;
        out.push({ name: `${r.name} · ${split}${e.label || ''}`, x: s.iterations, y: s[key].map(transform), color: color(r.name), dash: split in dashes ? dashes[split] : [4, 2, 1, 2] });
      }
    }
  }
  return out;
}

const pct = v => (typeof v === 'number' ? `${fmt(100 * v)}%` : '–');

// Each evaluation: its file, split, the weights it used, its iterations and examples, and its
// figures at the last iteration.
function evaluationTable(runs) {
  const rows = [];
  for (const r of runs)
    for (const e of r.evaluations || [])
      for (const [split, s] of Object.entries(e.splits || {})) {
        const last = s.iterations.length - 1;
        rows.push(h('tr', {}, h('td', {}, h('span', { class: 'swatch', style: `background:${color(r.name)}` }), r.name), h('td', {}, e.file),
          h('td', {}, split), h('td', {}, e.weights || '–'), h('td', {}, e.iters[0] === e.iters[1] ? `${e.iters[0]}` : `${e.iters[0]}–${e.iters[1]}`), h('td', {}, s.count),
          h('td', {}, last >= 0 ? pct(s.exact[last]) : '–'), h('td', {}, last >= 0 ? pct(s.per_position[last]) : '–')));
      }
  if (!rows.length) return '';
  return h('table', { class: 'wide evaluations' }, h('thead', {}, h('tr', {}, ...['run', 'file', 'split', 'weights', 'iterations', 'examples',
    'exact at the last', 'per position at the last'].map(t => h('th', {}, t)))), h('tbody', {}, rows));
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
  return !m || m === 'bits' ? 'log2 size' : m === 'size' ? 'maze size' : `median ${m}`;
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
  return h('table', { class: 'wide analysis' }, h('thead', {}, h('tr', {}, ...['run', 'split', 'ρ(Wx)', 'settle', 'cycle', 'diverge', 'wander',
    'first below tol (median)', 'spectral radius (median)', 'exact at training T', 'best exact', 'exact at max'].map(t => h('th', {}, t)))), h('tbody', {}, rows));
}

// ---- eval_trace.json of a maze run ----------------------------------------------------------
// `looplab eval DIR --trace N --split hard --iters LAST` keeps the answer after every iteration for
// the first N examples. A maze's tokens are its cells, row-major, each with 6 input features (the
// passage east, south, west, north open; the start; the goal); the answer is 1 on the path. The
// walls, the start, the goal and the true path are drawn from the file, and the model's path after
// chosen iterations (small multiples) and after the slider's iteration (with a play button).
const maze = { run: null, example: 0, iteration: null, timer: null };
const mazeColor = { open: '#ffffff', right: '#1f77b4', wrong: '#ff7f0e', missed: '#b9d3ee', start: '#2ca02c', goal: '#d62728', wall: '#1d2330' };
const mazeLegend = [['right', 'on the path and predicted'], ['wrong', 'predicted, not on the path'], ['missed', 'on the path, missed'],
  ['start', 'start'], ['goal', 'goal'], ['wall', 'wall']];
const EAST = 0, SOUTH = 1, WEST = 2, NORTH = 3, START = 4, GOAL = 5;

// The answer after iteration t: `answers` lists the iterations at which it changed (the first is
// iteration 1, in order), so it is the last change at or before t.
function answerAt(example, t) {
  const a = example.answers;
  let lo = 0, hi = a.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (a[mid].iteration <= t) lo = mid; else hi = mid - 1;
  }
  return a[lo].answer;
}

function cellsRight(answer, target) {
  let k = 0;
  for (let i = 0; i < target.length; i++) if (answer[i] === target[i]) k++;
  return k;
}

const mazeLabel = (t, k, p) => `iteration ${t}: ${k} of ${p} cells right${k === p ? ', exact' : ''}`;

// The small multiples' iterations: 1, the training depth T, then 100, 300, 1000, ... above it,
// and max_iters.
function mazeIterations(trace, run) {
  const max = trace.max_iters;
  const t = run.settings && run.settings.train && run.settings.train.training_iters;
  const out = [1, typeof t === 'number' && t > 0 ? t : 30];
  const top = Math.max(...out);
  for (let d = 10; d < max; d *= 10) for (const v of [d, 3 * d]) if (v > top && v < max) out.push(v);
  out.push(max);
  return [...new Set(out.filter(v => v >= 1 && v <= max))].sort((a, b) => a - b);
}

// The rings of blocked cells around an example's maze (a run trained with --border B: cells whose 6
// features are all 0, which no maze cell has, each having a passage): how many, from the outside in.
// They are left out of the drawing.
function mazeRing(trace, ex) {
  const [rows, cols] = trace.grid, ch = trace.channels;
  const blocked = (r, c) => { for (let k = 0; k < ch; k++) if (ex.input[(r * cols + c) * ch + k]) return false; return true; };
  let b = 0;
  for (; 2 * (b + 1) < Math.min(rows, cols); b++) {
    let all = true;
    for (let c = b; all && c < cols - b; c++) all = blocked(b, c) && blocked(rows - 1 - b, c);
    for (let r = b; all && r < rows - b; r++) all = blocked(r, b) && blocked(r, cols - 1 - b);
    if (!all) break;
  }
  return b;
}

// A canvas for a maze of `size`-pixel cells inside `ring` rings of blocked cells (left out); its
// geometry is in its data attributes (cell size, wall width, padding, device pixel ratio, the ring
// left out, the cells drawn), so that a test can find a cell's pixels.
function mazeCanvas(trace, size, ring = 0) {
  const rows = trace.grid[0] - 2 * ring, cols = trace.grid[1] - 2 * ring;
  const wall = size >= 12 ? 2 : 1, pad = wall, ratio = window.devicePixelRatio || 1;
  const w = cols * size + 2 * pad, ht = rows * size + 2 * pad;
  return h('canvas', { class: 'maze', width: Math.round(w * ratio), height: Math.round(ht * ratio), style: `width:${w}px;height:${ht}px`,
    dataset: { cellSize: size, wall, pad, ratio, rows, cols, ring } });
}

// Draws the maze with `answer` (a string, one class per cell) coloured against the target, or the
// true path alone when answer is null.
function paintMaze(canvas, trace, ex, answer) {
  const s = Number(canvas.dataset.cellSize), wall = Number(canvas.dataset.wall), pad = Number(canvas.dataset.pad);
  const ratio = Number(canvas.dataset.ratio), ring = Number(canvas.dataset.ring);
  const rows = Number(canvas.dataset.rows), cols = Number(canvas.dataset.cols), ch = trace.channels, input = ex.input;
  const at = (r, c) => (r + ring) * trace.grid[1] + c + ring;  // the file's index of drawn cell (r, c)
  const ctx = canvas.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.fillStyle = mazeColor.open;
  ctx.fillRect(pad, pad, cols * s, rows * s);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const i = at(r, c), path = ex.target[i] === '1', said = answer === null ? path : answer[i] === '1';
      const kind = said ? (path ? 'right' : 'wrong') : path ? 'missed' : null;
      if (!kind) continue;
      ctx.fillStyle = mazeColor[kind];
      ctx.fillRect(pad + c * s, pad + r * s, s, s);
    }
  // The start and the goal: a dot in the cell (ringed in white where cells are large enough).
  const big = s >= 12;
  ctx.strokeStyle = mazeColor.open;
  ctx.lineWidth = 1.5;
  for (let j = 0; j < rows * cols; j++)
    for (const [k, color] of [[START, mazeColor.start], [GOAL, mazeColor.goal]]) {
      const r = Math.floor(j / cols), c = j % cols;
      if (!input[at(r, c) * ch + k]) continue;
      ctx.fillStyle = color;
      ctx.beginPath();
      ctx.arc(pad + (c + 0.5) * s, pad + (r + 0.5) * s, (big ? 0.34 : 0.27) * s, 0, 2 * Math.PI);
      ctx.fill();
      if (big) ctx.stroke();
    }
  // A wall on each side whose passage is closed; lines on whole pixels (odd widths half a pixel
  // over), square caps closing the corners; the border always closed.
  const o = (wall % 2) / 2;
  ctx.strokeStyle = mazeColor.wall;
  ctx.lineWidth = wall;
  ctx.lineCap = 'square';
  ctx.beginPath();
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) {
      const f = at(r, c) * ch, x = pad + c * s + o, y = pad + r * s + o;
      if (!input[f + EAST]) { ctx.moveTo(x + s, y); ctx.lineTo(x + s, y + s); }
      if (!input[f + SOUTH]) { ctx.moveTo(x, y + s); ctx.lineTo(x + s, y + s); }
      if (!input[f + WEST]) { ctx.moveTo(x, y); ctx.lineTo(x, y + s); }
      if (!input[f + NORTH]) { ctx.moveTo(x, y); ctx.lineTo(x + s, y); }
    }
  ctx.rect(pad + o, pad + o, cols * s, rows * s);
  ctx.stroke();
}

// One drawn answer: the canvas and its label; the figure carries the iteration, the cells right,
// the cells and the answer drawn as data attributes.
function mazeFigure(trace, ex, size, kind, ring = 0) {
  const canvas = mazeCanvas(trace, size, ring), caption = h('figcaption', {});
  const fig = h('figure', { class: `maze ${kind}` }, canvas, caption);
  // The ring's cells (file indices): path marks on them are not drawn, but counted in the label.
  const [rows, cols] = trace.grid, ringCells = [];
  for (let i = 0; i < rows * cols; i++) {
    const r = Math.floor(i / cols), c = i % cols;
    if (r < ring || c < ring || r >= rows - ring || c >= cols - ring) ringCells.push(i);
  }
  fig.show = t => {
    const answer = answerAt(ex, t), k = cellsRight(answer, ex.target);
    paintMaze(canvas, trace, ex, answer);
    const onRing = ringCells.filter(i => answer[i] === '1').length;
    caption.textContent = mazeLabel(t, k, ex.target.length) + (onRing ? `; ${onRing} marked on the blocked ring` : '');
    Object.assign(fig.dataset, { iteration: t, right: k, cells: ex.target.length, answer });
  };
  return fig;
}

function mazeSection(runs) {
  const traced = runs.filter(r => r.trace);
  const mazes = traced.filter(r => r.trace.task === 'mazes');
  const notes = traced.filter(r => r.trace.task !== 'mazes').map(r => h('p', { class: 'note' },
    `${r.name}: its eval_trace.json is of task ${r.trace.task}; only mazes are drawn.`));
  if (maze.timer) { clearInterval(maze.timer); maze.timer = null; }
  if (!traced.length) return [h('p', { class: 'note' }, 'None of the selected runs has an eval_trace.json; ',
    h('code', {}, 'looplab eval DIR --trace 1 --split hard --iters 1000'), ' writes one (mazes are drawn).')];
  if (!mazes.length) return notes;
  if (!mazes.some(r => r.name === maze.run)) { maze.run = mazes[0].name; maze.example = 0; maze.iteration = null; }
  const run = mazes.find(r => r.name === maze.run), trace = run.trace;
  const [rows, cols] = trace.grid;
  if (!Array.isArray(trace.examples) || !trace.examples.length) return [...notes, h('p', { class: 'note' }, `${run.name}: eval_trace.json has no examples.`)];
  if (trace.channels !== 6) return [...notes, h('p', { class: 'note' }, `${run.name}: a maze trace of ${trace.channels} channels (6 expected); not drawn.`)];
  if (maze.example >= trace.examples.length) maze.example = 0;
  const ex = trace.examples[maze.example], max = trace.max_iters;
  if (maze.iteration === null || maze.iteration > max) maze.iteration = max;
  const redraw = () => { el.maze.replaceChildren(...mazeSection(runs)); rendered(); };

  const choosers = [];
  if (mazes.length > 1)
    choosers.push(select({ name: 'maze-run', label: 'run', choices: mazes.map(r => r.name), value: run.name,
      onInput: v => { maze.run = v; maze.example = 0; maze.iteration = null; redraw(); } }).el);
  if (trace.examples.length > 1) {
    const input = h('select', { name: 'maze-example', 'aria-label': 'example' },
      trace.examples.map((e, i) => h('option', { value: i, selected: i === maze.example }, `example ${e.index}`)));
    input.addEventListener('input', () => { maze.example = Number(input.value); redraw(); });
    choosers.push(h('label', { class: 'control' }, h('span', { class: 'label' }, 'example ', h('code', {}, 'maze-example')), input));
  }

  const pathCells = [...ex.target].filter(c => c === '1').length;
  const ring = mazeRing(trace, ex), inner = cols - 2 * ring;
  const truth = mazeCanvas(trace, Math.max(4, Math.min(18, Math.floor(480 / inner))), ring);
  paintMaze(truth, trace, ex, null);
  const view = mazeFigure(trace, ex, Number(truth.dataset.cellSize), 'view', ring);
  view.show(maze.iteration);
  const play = h('button', { type: 'button', name: 'maze-play' }, 'Play');
  const s = slider({ name: 'iteration', label: 'the answer after iteration', min: 1, max, step: 1, value: maze.iteration,
    onInput: v => { maze.iteration = Number(v); view.show(maze.iteration); rendered(); } });
  const stop = () => { clearInterval(maze.timer); maze.timer = null; play.textContent = 'Play'; };
  play.addEventListener('click', () => {
    if (maze.timer) return stop();
    if (maze.iteration >= max) maze.iteration = 0;
    const step = Math.max(1, Math.ceil(max / 250));
    play.textContent = 'Pause';
    maze.timer = setInterval(() => {
      s.input.value = String(Math.min(max, maze.iteration + step));
      s.input.dispatchEvent(new Event('input'));
      if (maze.iteration >= max) stop();
    }, 40);
  });

  const small = mazeIterations(trace, run).map(t => {
    const f = mazeFigure(trace, ex, Math.max(3, Math.min(8, Math.floor(216 / inner))), 'multiple', ring);
    f.show(t);
    return f;
  });
  return [...notes,
    h('p', { class: 'meta' }, `${run.name}: example ${ex.index} of the ${trace.split} split, ${rows - 2 * ring} × ${inner} cells (a maze of size ${2 * inner - 1}), `,
      ring ? `inside ${ring} ring${ring > 1 ? 's' : ''} of blocked cells (--border; not drawn), ` : '',
      `${trace.weights} weights, ${max} iterations; the answer changes at ${ex.answers.length} of them.`),
    choosers.length ? h('div', { class: 'controls' }, choosers) : '',
    h('p', { class: 'legend' }, mazeLegend.map(([k, text]) => h('span', {}, h('span', { class: 'swatch', dataset: { class: k }, style: `background:${mazeColor[k]}` }), text))),
    h('div', { class: 'maze-views' },
      h('figure', { class: 'maze truth', dataset: { cells: ex.target.length, path: pathCells } }, truth, h('figcaption', {}, `the true path: ${pathCells} cells`)),
      h('div', { class: 'maze-player' }, view, h('div', { class: 'maze-controls' }, play, s.el))),
    h('h3', {}, 'The predicted path at chosen iterations'),
    h('div', { class: 'maze-multiples' }, small)];
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
  const unevaluated = runs.filter(r => !(r.evaluations || []).length).map(r => r.name);
  el.evalNote.replaceChildren(evaluationTable(runs), unevaluated.length ? h('p', { class: 'note' },
    `No evaluation file in ${unevaluated.join(', ')}: `, h('code', {}, 'looplab eval DIR --split val,hard'), ' writes eval.json.') : '');
  plots.exact.update({ hideEmpty: true, title: 'Exact accuracy against iterations (val solid, hard dashed)', x_label: 'iterations', y_label: 'exact accuracy', yRange: [0, 1.02], series: evalSeries(runs, evaluationsOf, 'exact') });
  plots.per_position.update({ hideEmpty: true, title: 'Per-position accuracy against iterations', x_label: 'iterations', y_label: 'per-position accuracy', yRange: [0, 1.02], series: evalSeries(runs, evaluationsOf, 'per_position') });
  plots.step.update({ hideEmpty: true, title: 'Relative step ‖x(t+1) − x(t)‖ / ‖x(t)‖', x_label: 'iterations', y_label: 'log10 relative step', series: evalSeries(runs, evaluationsOf, 'relative_step', v => (v > 0 ? Math.log10(v) : null)) });
  plots.unchanged.update({ hideEmpty: true, title: 'Predictions that no longer change', x_label: 'iterations', y_label: 'fraction', yRange: [0, 1.02], series: evalSeries(runs, evaluationsOf, 'unchanged') });
  el.maze.replaceChildren(...mazeSection(runs));
  el.analysis.replaceChildren(analysisTable(runs));
  plots.analysis.update({ hideEmpty: true, title: 'Exact accuracy against iterations (analysis.json)', x_label: 'iterations', y_label: 'exact accuracy', yRange: [0, 1.02],
    series: evalSeries(runs, r => (r.analysis ? [{ splits: Object.fromEntries(Object.entries(r.analysis.splits || {}).map(([k, s]) => [k, s.accuracy || {}])) }] : []), 'exact') });
  const scaled = runs.filter(r => r.scaling);
  el.scalingNote.replaceChildren(scaled.length ? '' : h('p', { class: 'note' }, 'None of the selected runs has an eval_scaling.json; ', h('code', {}, 'looplab eval DIR --scaling'), ' writes one.'));
  plots.scaling_iters.update({ hideEmpty: true, title: 'Iterations spent against difficulty, per halting rule (eval_scaling.json)', x_label: scalingXLabel(runs), y_label: 'mean iterations', series: scalingSeries(runs, 'mean_iters') });
  plots.scaling_exact.update({ hideEmpty: true, title: 'Exact accuracy at the stop against difficulty', x_label: scalingXLabel(runs), y_label: 'exact accuracy', yRange: [0, 1.02], series: scalingSeries(runs, 'exact') });
  document.body.dataset.selected = [...selected].join(',');
  rendered();
}

// The paper's value for a run's configuration: in italics where the run's preset is not the
// paper's (the paper's scale, not its run).
function paperCell(v, r) {
  if (typeof v !== 'number') return '–';
  const preset = r.settings && r.settings.train ? r.settings.train.preset : undefined;
  return preset === 'paper' ? v.toFixed(2) : h('em', { title: "the paper's scale (this run's preset differs)" }, v.toFixed(2));
}

// A split's figure of the run's evaluations: exact accuracy at the last iteration, with the
// iteration and the weights in its title.
function resultCell(r, split) {
  const x = (r.results || {})[split];
  if (!x) return '–';
  const weights = x.weights === 'model.safetensors' ? 'final' : x.weights;
  return h('span', { title: `${x.file}: ${x.count} examples, ${weights} weights` }, `${pct(x.exact)} at ${x.iteration}`,
    weights === 'final' ? '' : h('small', {}, ` (${weights})`));
}

// Each file of a run as written (whatever its schema version), to download.
function fileLinks(r) {
  return r.files.flatMap((f, i) => [i ? ', ' : '',
    h('a', { href: `/api/runs/${encodeURIComponent(r.name)}/${encodeURIComponent(f)}`, download: `${r.name}-${f}` }, f)]);
}

function runList(j) {
  if (!j.exists) return h('p', { class: 'note' }, `The runs folder ${j.root} does not exist (give one with looplab serve --runs DIR).`);
  if (!j.runs.length) return h('p', { class: 'note' }, `No run folders in ${j.root}.`);
  return h('table', { class: 'runs' },
    h('thead', {}, h('tr', {}, ...['', 'run', 'task', 'recall', 'norm', 'width', 'lr', 'epochs', 'final val (best)', 'val', 'hard',
      'paper val', 'paper hard', 'files'].map(t => h('th', {}, t)))),
    h('tbody', {}, j.runs.map(r => {
      const box = h('input', { type: 'checkbox', name: r.name, checked: selected.has(r.name), 'aria-label': `overlay ${r.name}` });
      box.addEventListener('change', () => { if (box.checked) selected.add(r.name); else selected.delete(r.name); draw().catch(e => showError(e.message)); });
      const s = r.settings || {}, c = s.model || {}, t = s.train || {}, p = r.paper || {};
      const best = r.best_val_exact === null ? '' : h('small', {}, ` (best ${pct(r.best_val_exact)} at epoch ${r.best_epoch})`);
      return h('tr', { dataset: { run: r.name } }, h('td', {}, box), h('td', {}, h('span', { class: 'swatch', style: `background:${color(r.name)}` }), r.name),
        h('td', {}, c.task || '–'), h('td', {}, c.recall || '–'), h('td', {}, c.norm || '–'), h('td', {}, c.width ?? '–'), h('td', {}, t.lr ?? '–'),
        h('td', {}, r.epochs), h('td', { dataset: { cell: 'final' } }, r.final_val_exact === null ? '–' : pct(r.final_val_exact), best),
        h('td', { dataset: { cell: 'val' } }, resultCell(r, 'val')), h('td', { dataset: { cell: 'hard' } }, resultCell(r, 'hard')),
        h('td', { class: 'paper', dataset: { cell: 'paper-val' } }, paperCell(p.val, r)),
        h('td', { class: 'paper', dataset: { cell: 'paper-hard' } }, paperCell(p.hard, r)),
        h('td', { dataset: { cell: 'files' } }, ...fileLinks(r)));
    })));
}

main.append(nav('runs.html'), h('header', {}, h('h1', {}, 'Runs'),
  h('p', { class: 'lead' }, 'Every run folder under ', h('code', {}, 'looplab serve --runs DIR'), '; tick runs to overlay them.')),
el.list = h('section', {}),
h('section', {}, h('h2', {}, 'Configuration'), el.config = h('div', { class: 'scroll' }), el.errors = h('ul', { class: 'errors' })),
el.training = h('section', {}, h('h2', {}, 'Training curves (metrics.jsonl)'), el.trainNote = h('div')),
el.eval = h('section', {}, h('h2', {}, 'Accuracy and convergence against iterations (eval.json, eval-NAME.json)'), el.evalNote = h('div')),
h('section', { class: 'mazes' }, h('h2', {}, 'Maze: the predicted path over the iterations (eval_trace.json)'), el.maze = h('div')),
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
