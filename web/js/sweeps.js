// The sweeps page: the reports of `looplab sweep report` under `looplab serve --sweeps DIR`
// (GET /api/sweeps, /api/sweeps/NAME): tables 4 and 5 in the paper's layout (mean ± standard
// error over seeds, the paper's value beside each cell), every group, figure 3 (the best
// autonomous configuration's accuracy against iterations, the training depth shaded) and
// figure 6 (rho(Wx) against the learning rate without outer normalization), and where the runs
// have them the fixed points (analysis.json) and test-time compute against difficulty
// (eval_scaling.json) per group.
// sweeps.html?sweep=NAME selects NAME.
import { api, h, Plot, nav, rendered, showError, fmt, palette, select } from './lab.js';

const main = document.querySelector('main');
const el = {};
let fig3, fig6;

const cell = s => (!s || !s.n ? '–' : s.n === 1 ? s.mean.toFixed(2) : `${s.mean.toFixed(2)} ± ${s.standard_error.toFixed(2)}`);
const paper = (v, g) => (v === null || v === undefined ? '–' : g.preset === 'paper' ? v.toFixed(2) : h('em', { title: "the paper's scale (its preset differs)" }, v.toFixed(2)));

function paperTable(report, split) {
  const cols = [], rows = [];
  for (const g of report.groups) {
    if (!cols.some(c => c.task === g.task && c.lr === g.lr)) cols.push({ task: g.task, lr: g.lr });
    if (!rows.some(r => r.norm === g.norm && r.recall === g.recall)) rows.push({ norm: g.norm, recall: g.recall });
  }
  const find = (r, c) => {
    const m = report.groups.filter(g => g.norm === r.norm && g.recall === r.recall && g.task === c.task && g.lr === c.lr);
    return m.length === 1 ? m[0] : null;
  };
  return h('table', { class: `paper ${split}` },
    h('thead', {}, h('tr', {}, h('th', {}, 'norm'), h('th', {}, 'recall'),
      cols.flatMap(c => [h('th', {}, `${c.task} lr ${c.lr}`), h('th', { class: 'paper' }, 'paper')]))),
    h('tbody', {}, rows.map(r => h('tr', {}, h('th', {}, r.norm), h('th', {}, r.recall), cols.flatMap(c => {
      const g = find(r, c);
      return g ? [h('td', {}, cell(g[split])), h('td', { class: 'paper' }, paper(g[`paper_${split}`], g))] : [h('td', {}, '–'), h('td', {}, '–')];
    })))));
}

function groupsTable(report) {
  return h('table', { class: 'groups' },
    h('thead', {}, h('tr', {}, ['group', 'runs done', 'val', 'hard', 'rho(Wx)', 'paper val', 'paper hard'].map(t => h('th', {}, t)))),
    h('tbody', {}, report.groups.map(g => h('tr', {}, h('td', {}, g.group), h('td', {}, `${g.runs.length}/${g.runs_planned}`),
      h('td', {}, cell(g.val)), h('td', {}, cell(g.hard)), h('td', {}, g.rho && g.rho.n ? fmt(g.rho.mean) : '–'),
      h('td', {}, paper(g.paper_val, g)), h('td', {}, paper(g.paper_hard, g))))));
}

// mean ± standard error, each written by `f` (default: one digit after the point, for percents).
const pct = v => v.toFixed(1);
const stat = (s, f = pct) => (!s || !s.n ? '–' : s.n === 1 ? f(s.mean) : `${f(s.mean)} ± ${f(s.standard_error)}`);
const sig = v => fmt(v, 4);

function fixedPointsTable(report) {
  const groups = report.groups.filter(g => g.settle && g.settle.n);
  if (!groups.length) return h('p', { class: 'note' }, 'No run of this sweep has an analysis.json.');
  return h('table', { class: 'fixed-points' },
    h('thead', {}, h('tr', {}, ['group', 'runs', 'settle %', 'rho(df/dx)', 'rho < 1 %', 'dx*/dx0', 'hard'].map(t => h('th', {}, t)))),
    h('tbody', {}, groups.map(g => h('tr', {}, h('td', {}, g.group), h('td', {}, String(g.settle.n)),
      h('td', {}, stat(g.settle)), h('td', {}, stat(g.radius, sig)), h('td', {}, stat(g.radius_below_1)),
      h('td', {}, stat(g.sensitivity, sig)), h('td', {}, cell(g.hard))))));
}

function scalingTable(report) {
  const groups = report.groups.filter(g => g.scaling);
  if (!groups.length) return h('p', { class: 'note' }, 'No run of this sweep has an eval_scaling.json (scripts/sweep-scaling writes them).');
  const levels = groups[0].scaling.levels;
  return h('table', { class: 'scaling' },
    h('thead', {}, h('tr', {}, ['group', 'rule', ...levels].map(t => h('th', {}, t)))),
    h('tbody', {}, groups.flatMap(g => g.scaling.rules.map(r => h('tr', {}, h('td', {}, g.group), h('td', {}, r.rule),
      r.iters.map((s, i) => h('td', {}, s.n ? `${pct(s.mean)} / ${pct(r.exact[i].mean)}` : '–')))))));
}

function draw(report) {
  el.title.textContent = `${report.sweep} (${report.file}): exact accuracy after ${report.eval_iters} iterations`;
  el.val.replaceChildren(paperTable(report, 'val'));
  el.hard.replaceChildren(paperTable(report, 'hard'));
  el.groups.replaceChildren(groupsTable(report));
  el.fixedPoints.replaceChildren(fixedPointsTable(report));
  el.scaling.replaceChildren(scalingTable(report));
  const curves = report.figure3 || [];
  const depth = Math.max(0, ...curves.map(c => c.training_iters));
  fig3.update({
    title: 'Figure 3: the best autonomous configuration of each task', x_label: 'iterations', y_label: 'exact %',
    yRange: [0, 100], hideEmpty: true,
    series: curves.flatMap((c, i) => ['val', 'hard'].map(split => ({
      name: `${c.task} ${c.group} ${split}`, x: c[split].map((_, t) => t + 1), y: c[split],
      color: palette[i % palette.length], dash: split === 'hard' ? [8, 4] : undefined }))),
    // The iterations seen in training, shaded as in the paper.
    underlay: (u, ctx) => {
      if (!depth) return;
      const x0 = u.valToPos(1, 'x', true), x1 = u.valToPos(depth, 'x', true);
      ctx.save(); ctx.fillStyle = 'rgba(128,128,128,0.15)';
      ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height); ctx.restore();
    },
  });
  const points = report.figure6 || [];
  // One line per group without its learning rate (reports before 2026-12-05 have no series).
  const line = p => `${p.task} ${p.series || `recall-${p.recall}_norm-${p.norm}`}`;
  const keys = [...new Set(points.map(line))];
  const series6 = [];
  fig6.update({
    // A marker at every point (a sweep at one learning rate has lines of one point).
    underlay: (u, ctx) => {
      ctx.save();
      series6.forEach(s => {
        ctx.fillStyle = s.color;
        s.x.forEach((x, i) => {
          ctx.beginPath();
          ctx.arc(u.valToPos(x, 'x', true), u.valToPos(s.y[i], 'y', true), 4 * devicePixelRatio, 0, 2 * Math.PI);
          ctx.fill();
        });
      });
      ctx.restore();
    },
    title: 'Figure 6: rho(Wx) against the learning rate, recall without outer normalization', x_label: 'log10(lr)',
    y_label: 'rho(Wx)', hideEmpty: true,
    series: keys.map((k, i) => {
      const ps = points.filter(p => line(p) === k).sort((a, b) => a.lr - b.lr);
      const s = { name: k, x: ps.map(p => Math.log10(p.lr)), y: ps.map(p => p.rho.mean), color: palette[i % palette.length] };
      series6.push(s);
      return s;
    }),
  });
  rendered();
}

async function show(name) {
  try {
    showError('');
    const report = await api(`/api/sweeps/${encodeURIComponent(name)}`);
    history.replaceState(null, '', `?sweep=${encodeURIComponent(name)}`);
    draw(report);
  } catch (e) {
    showError(e.message);
    rendered();
  }
}

main.append(nav('sweeps.html'), h('header', {}, h('h1', {}, 'Sweeps'),
  h('p', {}, 'Reports of ', h('code', {}, 'looplab sweep report FILE'), ' under ', h('code', {}, 'looplab serve --sweeps DIR'),
    ". Cells: mean exact accuracy (%) ± its standard error over the seeds done; beside each, the paper's value (in italics where the sweep's preset is not the paper's)."),
  el.choose = h('div', { class: 'controls' })),
h('section', {}, el.title = h('h2', {}, ''), h('h3', {}, 'val (table 4)'), el.val = h('div', { class: 'scroll' }),
  h('h3', {}, 'hard (table 5)'), el.hard = h('div', { class: 'scroll' })),
h('section', {}, h('h2', {}, 'Figures 3 and 6'), el.plots = h('div', { class: 'plots' })),
h('section', {}, h('h2', {}, 'Every group'), el.groups = h('div', { class: 'scroll' })),
h('section', {}, h('h2', {}, 'Fixed points (analysis.json, val)'),
  h('p', {}, 'Per group: the percent of examples whose iteration settles; over the detailed examples, the median spectral radius of df/dx at the fixed point, the percent with radius below 1, and the median norm of the input sensitivity dx*/dx0.'),
  el.fixedPoints = h('div', { class: 'scroll' })),
h('section', {}, h('h2', {}, 'Test-time compute against difficulty (eval_scaling.json)'),
  h('p', {}, 'Per group and halting rule: mean iterations spent / exact % at the stop, per level (none: every example run to the end).'),
  el.scaling = h('div', { class: 'scroll' })));
for (const key of ['figure3', 'figure6']) {
  const box = h('div', { class: 'plot', dataset: { plot: key } });
  el.plots.append(box);
  if (key === 'figure3') fig3 = new Plot(box, { height: 300 }); else fig6 = new Plot(box, { height: 300 });
}

(async () => {
  try {
    const list = await api('/api/sweeps');
    const names = list.sweeps.filter(s => !s.error).map(s => s.name);
    if (!names.length) {
      el.title.textContent = `No sweep reports in ${list.root} (run looplab sweep report FILE; its runs folder must be inside --sweeps).`;
      rendered();
      return;
    }
    const wanted = new URLSearchParams(location.search).get('sweep');
    const first = names.includes(wanted) ? wanted : names[0];
    el.choose.append(select({ name: 'sweep', label: 'sweep', choices: names, value: first, onInput: show }).el);
    await show(first);
  } catch (e) {
    showError(e.message);
    rendered();
  }
})();
