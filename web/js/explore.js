// One chapter-7 illustration: /explore.html?name=NAME. Every number on the page comes from
// GET /api/explore/NAME?PARAM=VALUE (the engine of `looplab explore NAME --json`).
import { api, h, tex, reveal, Plot, nav, slider, select, latest, showError, rendered } from './lab.js';

const main = document.querySelector('main');
const name = new URLSearchParams(location.search).get('name') || 'memory-decay';

// Slider step: 1 for integers, else a power of ten giving about 200 to 2000 positions.
function step(p) {
  if (p.kind === 'integer') return 1;
  return 10 ** Math.floor(Math.log10((p.max - p.min) / 200));
}

const el = {};
let plots = [];
const inputs = {};

function query() {
  return new URLSearchParams(Object.fromEntries(Object.entries(inputs).map(([k, i]) => [k, i.value]))).toString();
}

// The page's address keeps the current values (explore.html?name=NAME&PARAM=VALUE), so a
// setting can be shared or bookmarked.
const update = latest(() => {
  history.replaceState(null, '', `?name=${encodeURIComponent(name)}&${query()}`);
  return api(`/api/explore/${encodeURIComponent(name)}?${query()}`);
}, draw);

function skeleton(j) {
  document.title = `looplab: ${j.title}`;
  main.append(nav(''),
    h('header', {},
      h('p', { class: 'kicker' }, `Illustration ${j.number} of 8 · ${j.source}`),
      h('h1', {}, j.title),
      h('p', { class: 'lead' }, j.question)),
    reveal('Predict first', j.predict_first.question, el.predict = h('span'), 'predict'),
    h('div', { class: 'workbench' },
      h('div', { class: 'side' },
        el.controls = h('section', { class: 'controls' }, h('h2', {}, 'Parameters')),
        h('section', { class: 'readouts' }, h('h2', {}, 'Readouts'), el.readouts = h('dl'))),
      el.plots = h('section', { class: 'plots stack' })),
    h('section', {}, h('h2', {}, 'What happens'), el.summary = h('p'), el.conclusion = h('p', { class: 'conclusion' })),
    h('section', { class: 'calculation' }, h('h2', {}, 'The calculation, with the current numbers'), el.calculation = h('p')),
    h('section', { class: 'equations' }, h('h2', {}, 'Equations'), el.equations = h('div'), h('h3', {}, 'Symbols'), el.symbols = h('dl', { class: 'symbols' })),
    h('section', {}, h('h2', {}, 'Conditions'), el.conditions = h('p'), h('h2', {}, 'Why it matters'), el.why = h('p')),
    reveal('Check your understanding', j.check.question, el.check = h('span'), 'check'));
  for (const p of j.parameters) {
    const c = p.kind === 'choice'
      ? select({ name: p.name, label: p.label, choices: p.choices, value: p.value, onInput: update })
      : slider({ name: p.name, label: p.label, min: p.min, max: p.max, step: step(p), value: p.value, onInput: update });
    inputs[p.name] = c.input;
    const range = p.kind === 'choice' ? `one of ${p.choices.join(', ')}` : `${p.min} to ${p.max}, default ${p.default}`;
    el.controls.append(h('div', { class: 'param' }, c.el, h('small', {}, range)));
  }
  plots = j.plots.map(() => {
    const box = h('div', { class: 'plot' });
    el.plots.append(box);
    return new Plot(box, { height: 270 });
  });
}

function draw(j) {
  el.readouts.replaceChildren(...j.readouts.flatMap(r => [
    h('dt', {}, r.label),
    h('dd', { dataset: { readout: r.key } }, r.text)]));
  j.plots.forEach((p, i) => plots[i].update(p));
  el.summary.textContent = j.summary;
  el.conclusion.textContent = j.conclusion;
  el.calculation.textContent = j.calculation;
  el.equations.replaceChildren(...j.equations.map(e => tex(e, true)));
  el.symbols.replaceChildren(...j.symbols.flatMap(s => [h('dt', {}, tex(s.symbol)), h('dd', {}, s.meaning)]));
  el.conditions.textContent = j.conditions;
  el.why.textContent = j.why_it_matters;
  el.predict.textContent = j.predict_first.answer;
  el.check.replaceChildren(j.check.answer, ...(j.check.values
    ? [h('dl', { class: 'values' }, Object.entries(j.check.values).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]))]
    : []));
}

try {
  const given = new URLSearchParams(location.search);
  given.delete('name');
  let first;
  try {
    first = await api(`/api/explore/${encodeURIComponent(name)}?${given}`);
  } catch (e) {
    if (![...given].length) throw e;
    first = await api(`/api/explore/${encodeURIComponent(name)}`);  // bad values in the address: defaults
    setTimeout(() => showError(`${e.message} (showing the defaults)`));
  }
  skeleton(first);
  draw(first);
  rendered();
} catch (e) {
  main.append(nav(''), h('h1', {}, 'looplab'));
  showError(e.message);
  rendered();
}
