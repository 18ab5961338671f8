// End-to-end test of the web lab: starts `looplab serve` on a free port with the shipped models
// as its runs, drives Debian's Chromium through playwright-core, and checks that every page
// loads with no console error, that moving a slider on each illustration puts the engine's
// numbers on the page (readouts and plot data equal to GET /api/explore/NAME for the slider's
// new value), and the same for the geometry pages and the runs page's overlay.
//
//   node tests/serve/e2e.mjs LOOPLAB_BINARY [--screenshots DIR] [--url URL_OF_A_RUNNING_SERVER]
//
// playwright-core comes from web/node_modules (`npm ci` in web/, done by scripts/setup).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'web', 'package.json'));
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
const binary = resolve(args[0] || join(root, 'build', 'looplab'));
const shotsAt = args.indexOf('--screenshots');
const shots = shotsAt >= 0 ? resolve(args[shotsAt + 1]) : null;
if (shots) mkdirSync(shots, { recursive: true });
const chromiumPath = process.env.LOOPLAB_CHROMIUM || '/usr/bin/chromium';

let passed = 0, failed = 0;
function check(ok, what, detail = '') {
  if (ok) { passed++; console.log(`ok    ${what}`); } else { failed++; console.log(`FAIL  ${what}${detail ? `: ${detail}` : ''}`); }
  return ok;
}

// ---- the server (or --url URL: one already running, with --runs models) ----------------------
const urlAt = args.indexOf('--url');
// A toy sweep (2 recalls x 2 seeds, pre norm, tiny width) run and reported by the command line,
// so that the sweeps page has a report.json whose numbers it must show.
const sweeps = mkdtempSync(join(tmpdir(), 'looplab-e2e-sweeps-'));
if (urlAt < 0) {
  writeFileSync(join(sweeps, 'toy.toml'), ['[base]', 'norm = "pre"', 'width = 16', 'heads = 2', 'epochs = 2',
    'train-count = 300', 'val-count = 40', 'hard-count = 10', 'train-bits = 4', 'hard-bits = 8', 'batch = 50', 'max-iters = 4',
    '[axes]', 'recall = ["none", "external"]', 'seed = [0, 1]', '[eval]', 'iters = 12', '[analyze]', 'count = 4', 'detail = 1',
    'iters = 12', ''].join('\n'));
  for (const c of ['run', 'report']) execFileSync(binary, ['sweep', c, join(sweeps, 'toy.toml')], { stdio: ['ignore', 'ignore', 'pipe'] });
}
const server = urlAt >= 0 ? null : spawn(binary, ['serve', '--port', '0', '--runs', join(root, 'models'), '--sweeps', sweeps, '--web', join(root, 'web')],
  { stdio: ['ignore', 'pipe', 'inherit'] });
const base = server === null ? args[urlAt + 1].replace(/\/$/, '') : await new Promise((res, rej) => {
  let text = '';
  const timer = setTimeout(() => rej(new Error(`looplab serve printed no address: ${text}`)), 20000);
  server.stdout.on('data', d => {
    text += d;
    const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
    if (m) { clearTimeout(timer); res(`http://127.0.0.1:${m[1]}`); }
  });
  server.on('exit', code => rej(new Error(`looplab serve exited with ${code}: ${text}`)));
});
console.log(`server at ${base}`);
const getJson = async path => (await fetch(base + path)).json();

const browser = await chromium.launch({
  executablePath: chromiumPath,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
// Nothing may leave 127.0.0.1 (this test's servers): the pages must work with no network.
await context.route(url => !url.href.startsWith('http://127.0.0.1:'), route => { check(false, `no request outside the server`, route.request().url()); route.abort(); });

// Opens a page and waits for its first render; records console errors, failed requests, 4xx/5xx.
async function open(path) {
  const page = await context.newPage();
  page.problems = [];
  page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') page.problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', e => page.problems.push(`page error: ${e.message}`));
  page.on('requestfailed', r => page.problems.push(`request failed: ${r.url()}`));
  page.on('response', r => { if (r.status() >= 400) page.problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  await page.goto(base + path);
  await page.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1, null, { timeout: 20000 });
  return page;
}
async function clean(page, what) {
  await page.waitForLoadState('networkidle');
  const shown = await page.evaluate(() => { const e = document.getElementById('error'); return e && !e.hidden ? e.textContent : ''; });
  return check(page.problems.length === 0 && !shown, `${what}: loads with no console error`, [...page.problems, shown].filter(Boolean).join('; '));
}
const updates = page => page.evaluate(() => Number(document.body.dataset.updates || 0));
// Moves a slider (or sets a field) and waits for the page to draw the answer. With a value, the
// input is set to it and gets the events a user's change fires; without one, the slider is
// clicked with the mouse at 30% of its track, as a user would. Returns the input's new value.
async function move(page, name, value) {
  const before = await updates(page);
  const input = page.locator(`[name="${name}"]`);
  if (value === undefined) {
    const box = await input.boundingBox();
    await input.click({ position: { x: box.width * 0.3, y: box.height / 2 } });
  } else {
    await input.evaluate((el, v) => {
      el.value = String(v);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    }, value);
  }
  await page.waitForFunction(n => Number(document.body.dataset.updates) > n, before, { timeout: 20000 });
  await page.waitForLoadState('networkidle');
  return input.inputValue();
}
// Polls `test` (async, returns [ok, detail]) for up to 5 s: renders may still be landing.
async function eventually(test) {
  let r;
  for (let i = 0; i < 50; ++i) {
    r = await test();
    if (r[0]) return r;
    await new Promise(res => setTimeout(res, 100));
  }
  return r;
}
const plotData = page => page.evaluate(() => window.lab.plots.map(p => p.data()));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const finite = v => (v === null || !Number.isFinite(v) ? null : v);

try {
  // ---- index ---------------------------------------------------------------------------------
  const list = await getJson('/api/explore');
  {
    const page = await open('/');
    await clean(page, 'index');
    const links = await page.locator('#illustrations a').count();
    check(links === list.length && list.length === 8, 'index links the eight illustrations', `${links} links`);
    await page.close();
  }

  // ---- each illustration: move one slider, read the engine's values back -----------------------
  for (const ill of list) {
    const page = await open(`/explore.html?name=${ill.name}`);
    await clean(page, `explore ${ill.name}`);
    const p = ill.parameters.find(q => q.kind !== 'choice');
    const value = await move(page, p.name);
    const params = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('.controls [name]')].map(i => [i.name, i.value])));
    const engine = await getJson(`/api/explore/${ill.name}?${new URLSearchParams(params)}`);
    const defaults = await getJson(`/api/explore/${ill.name}`);
    const [okReadouts, detail] = await eventually(async () => {
      const texts = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-readout]')].map(e => [e.dataset.readout, e.textContent])));
      const bad = engine.readouts.filter(r => texts[r.key] !== r.text).map(r => `${r.key}: page '${texts[r.key]}' engine '${r.text}'`);
      return [bad.length === 0, bad.join('; ')];
    });
    check(okReadouts, `explore ${ill.name}: ${p.name} = ${value}: every readout is the engine's`, detail);
    const drawn = await plotData(page);
    const want = engine.plots.map(pl => pl.series.map(s => [s.x.map(finite), s.y.map(finite)]));
    check(same(drawn, want), `explore ${ill.name}: both plots draw the engine's data`);
    const calc = await page.locator('.calculation p').textContent();
    check(calc === engine.calculation, `explore ${ill.name}: the calculation is the engine's, with the current numbers`);
    const changed = !same(engine.readouts, defaults.readouts) && !same(engine.plots, defaults.plots);
    check(changed, `explore ${ill.name}: moving ${p.name} changed a readout and a plot`);
    const katex = await page.locator('.equations .katex').count();
    check(katex >= engine.equations.length, `explore ${ill.name}: ${engine.equations.length} equations typeset`);
    await page.click('[data-reveal="predict"]');
    await page.click('[data-reveal="check"]');
    const answers = await page.evaluate(() => [...document.querySelectorAll('[data-answer]')].map(e => !e.hidden && e.textContent));
    check(answers[0] === engine.predict_first.answer && String(answers[1]).startsWith(engine.check.answer),
      `explore ${ill.name}: predict-first and check answers revealed`);
    if (shots && ill.name === 'memory-decay') await page.screenshot({ path: join(shots, 'illustration.png'), fullPage: true });
    await page.close();
  }

  {
    // The address carries the values: a shared link opens on them.
    const page = await open('/explore.html?name=memory-decay&a=0.5');
    await clean(page, 'explore memory-decay?a=0.5');
    const engine = await getJson('/api/explore/memory-decay?a=0.5');
    const shown = await page.evaluate(() => [document.querySelector('[name="a"]').value, document.querySelector('[data-readout="weight_lag3"]').textContent]);
    check(shown[0] === '0.5' && shown[1] === engine.readouts.find(r => r.key === 'weight_lag3').text, 'explore: a link with a = 0.5 opens on a = 0.5', JSON.stringify(shown));
    await page.close();
  }

  // ---- geometry --------------------------------------------------------------------------------
  {
    const page = await open('/regions.html');
    await clean(page, 'regions');
    await move(page, 'n', 101);
    await move(page, 'xmin', -5);
    const g = await getJson('/api/regions?xmin=-5&xmax=10&ymin=-6&ymax=6&n=101');
    const [ok, detail] = await eventually(async () => {
      const t = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-readout]')].map(e => [e.dataset.readout, e.textContent])));
      const near = (text, v) => Math.abs(parseFloat(text) - 100 * v) <= 1e-3 * Math.max(1, 100 * v);
      return [t.n === '101 × 101' && near(t.internal_fraction, g.internal_fraction) && near(t.external_fraction, g.external_fraction) &&
        near(t.both_fraction, g.both_fraction), JSON.stringify(t)];
    });
    check(ok, `regions: n = 101, xmin = -5: the shares are the engine's`, detail);
    await move(page, 'xmin', -10);
    await move(page, 'n', 201);
    if (shots) await page.screenshot({ path: join(shots, 'regions.png'), fullPage: true });
    await page.close();
  }
  {
    const page = await open('/phase.html');
    await clean(page, 'phase');
    await move(page, 'lx', 1.2);
    const p = await getJson('/api/phase?lx=1.2&ly=1.5&steps=30&starts=16&radius=1');
    const [ok, detail] = await eventually(async () => {
      const fixed = await page.locator('[data-readout="fixed_point"]').textContent();
      const drawn = await plotData(page);
      const want = p.trajectories.map(t => [t.points.map(q => q[0]), t.points.map(q => q[1])]);
      return [fixed === p.fixed_point && fixed === 'repelling' && same(drawn[0], want), fixed];
    });
    check(ok, 'phase: lx = 1.2: the fixed point and every trajectory are the engine\'s', detail);
    await page.close();
  }
  {
    const page = await open('/anisotropy.html');
    await clean(page, 'anisotropy');
    await move(page, 'n', 500);
    const a = await getJson('/api/anisotropy?n=500&sigma=0.5%2C1%2C2%2C4&seed=0');
    const [ok, detail] = await eventually(async () => {
      const cells = await page.evaluate(() => [...document.querySelectorAll('[data-readout="log_range_mean"]')].map(e => parseFloat(e.textContent)));
      const want = a.rows.map(r => r.log_range.mean);
      return [cells.length === want.length && cells.every((c, i) => Math.abs(c - want[i]) <= 1e-3 * Math.abs(want[i])), JSON.stringify(cells)];
    });
    check(ok, 'anisotropy: n = 500: every mean log-range is the engine\'s', detail);
    await page.close();
  }

  // ---- runs: the two shipped prefix-sums models overlaid --------------------------------------
  {
    const names = ['prefix-sums-external-post', 'prefix-sums-none-post'];
    const page = await open(`/runs.html?runs=${names.join(',')}`);
    await clean(page, 'runs');
    const listed = await page.locator('table.runs tbody tr').count();
    const runs = await getJson('/api/runs');
    check(listed === runs.runs.length && names.every(n => runs.runs.some(r => r.name === n)), `runs: lists the ${runs.runs.length} runs of models/`);
    const loss = await Promise.all(names.map(async n => (await getJson(`/api/runs/${n}`)).metrics.map(m => m.loss)));
    const drawn = await plotData(page);
    check(drawn[0].length === 2 && same(drawn[0].map(s => s[1]), loss), 'runs: the loss curves of both prefix-sums runs are overlaid, equal to metrics.jsonl');
    if (shots) await page.screenshot({ path: join(shots, 'runs.png'), fullPage: true });
    const before = await updates(page);
    await page.locator('input[type=checkbox][name="sudoku-external-post"]').check();
    await page.waitForFunction(n => Number(document.body.dataset.updates) > n, before);
    const more = await plotData(page);
    check(more[0].length === 3 && more[4].length >= 2, 'runs: ticking the sudoku run adds its training curve and its eval.json curves');
    await clean(page, 'runs after overlaying three');
    await page.close();
  }

  // ---- sweeps: the toy sweep's report.json as written -----------------------------------------
  if (server) {
    const page = await open('/sweeps.html');
    await clean(page, 'sweeps');
    const report = JSON.parse(readFileSync(join(sweeps, 'toy', 'report.json'), 'utf8'));
    const cells = await page.locator('table.paper.val tbody tr').evaluateAll(trs => trs.map(tr => [...tr.cells].map(c => c.textContent)));
    const cellText = s => (s.n === 1 ? s.mean.toFixed(2) : `${s.mean.toFixed(2)} ± ${s.standard_error.toFixed(2)}`);
    const want = report.groups.map(g => ['pre', g.recall, cellText(g.val), g.paper_val.toFixed(2)]);
    check(same(cells, want), 'sweeps: table 4 shows report.json\'s means, standard errors and the paper\'s values', JSON.stringify([cells, want]));
    const drawn = await plotData(page);
    const c = report.figure3[0];
    check(same(drawn[0], [[c.val.map((_, i) => i + 1), c.val], [c.hard.map((_, i) => i + 1), c.hard]]),
      'sweeps: figure 3 is the autonomous group\'s mean curve of report.json');
    check(same(drawn[1].map(s => s[1]), report.figure6.map(p => [p.rho.mean])), 'sweeps: figure 6 is report.json\'s rho(Wx) per recall');
    if (shots) await page.screenshot({ path: join(shots, 'sweeps-toy.png'), fullPage: true });
    await page.close();
  }

  // ---- runs: eval.json and analysis.json drawn as written ------------------------------------
  // A tiny untrained model gets an eval.json and an analysis.json from the command line; a second
  // server shows it, and the page must draw exactly their numbers.
  if (server) {
    const tmp = mkdtempSync(join(tmpdir(), 'looplab-e2e-'));
    const dir = join(tmp, 'tiny');
    try {
      const run = (...a) => execFileSync(binary, a, { stdio: ['ignore', 'ignore', 'pipe'] });
      run('init', '--task', 'prefix-sums', '--recall', 'external', '--norm', 'post', '--width', '16', '--heads', '2', '--seed', '1', '--out', dir);
      run('eval', dir, '--split', 'val', '--iters', '1:12', '--count', '6');
      run('analyze', dir, '--split', 'val', '--count', '6', '--iters', '12', '--detail', '2');
      const second = spawn(binary, ['serve', '--port', '0', '--runs', tmp, '--web', join(root, 'web')], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        const url = await new Promise((res, rej) => {
          let text = '';
          second.stdout.on('data', d => { text += d; const m = text.match(/http:\/\/127\.0\.0\.1:(\d+)\//); if (m) res(`http://127.0.0.1:${m[1]}`); });
          second.on('exit', code => rej(new Error(`second looplab serve exited with ${code}`)));
        });
        const page = await context.newPage();
        page.problems = [];
        page.on('console', m => { if (m.type() === 'error' || m.type() === 'warning') page.problems.push(`console ${m.type()}: ${m.text()}`); });
        page.on('pageerror', e => page.problems.push(`page error: ${e.message}`));
        await page.goto(`${url}/runs.html`);
        await page.waitForFunction(() => Number(document.body.dataset.updates || 0) >= 1, null, { timeout: 20000 });
        await page.waitForLoadState('networkidle');
        check(page.problems.length === 0, 'runs with eval.json and analysis.json: loads with no console error', page.problems.join('; '));
        const evalJson = JSON.parse(readFileSync(join(dir, 'eval.json'), 'utf8'));
        const analysis = JSON.parse(readFileSync(join(dir, 'analysis.json'), 'utf8'));
        const drawn = await page.evaluate(() => window.lab.plots.map(p => p.data()));
        const v = evalJson.splits.val, a = analysis.splits.val;
        check(same(drawn[4], [[v.iterations, v.exact]]) && same(drawn[5], [[v.iterations, v.per_position]]) &&
          same(drawn[7], [[v.iterations, v.unchanged]]), 'runs: accuracy and settled predictions against iterations are eval.json\'s');
        check(same(drawn[8], [[a.accuracy.iterations, a.accuracy.exact]]), 'runs: the analysis plot is analysis.json\'s accuracy against iterations');
        const row = await page.locator('table.wide tbody tr').first().evaluate(tr => [...tr.cells].map(c => c.textContent));
        const pct = x => `${Number((100 * x).toPrecision(3))}%`;
        check(row[1] === 'val' && row[3] === pct(a.convergence.settle) && row[6] === pct(a.convergence.wander),
          'runs: the analysis table shows analysis.json\'s convergence classes', JSON.stringify(row));
        if (shots) await page.screenshot({ path: join(shots, 'runs-analysis.png'), fullPage: true });
        await page.close();
      } finally {
        second.kill('SIGTERM');
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
} catch (e) {
  check(false, 'end-to-end run', e.stack || String(e));
} finally {
  await browser.close();
  if (server) server.kill("SIGTERM");
  rmSync(sweeps, { recursive: true, force: true });
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
