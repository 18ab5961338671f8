// The index: the eight illustrations (from GET /api/explore), the geometry pages and the runs.
import { api, h, nav, showError, rendered } from './lab.js';

const main = document.querySelector('main');
main.append(nav('index.html'),
  h('header', {}, h('h1', {}, 'looplab: the web lab'),
    h('p', { class: 'lead' }, 'Recurrence stability in a browser: the eight chapter-7 illustrations, the paper\'s ',
      'stability geometry, and the training runs. Every number is computed by the same engines as the ',
      h('code', {}, 'looplab'), ' command line.')));
try {
  const list = await api('/api/explore');
  main.append(h('section', {}, h('h2', {}, 'Illustrations'),
    h('ol', { class: 'cards', id: 'illustrations' }, list.map(i => h('li', {},
      h('a', { href: `explore.html?name=${encodeURIComponent(i.name)}` }, i.title),
      h('small', {}, ' ', h('code', {}, i.name), ' · ', i.parameters.map(p => p.name).join(', ')))))));
} catch (e) {
  showError(e.message);
}
main.append(
  h('section', {}, h('h2', {}, 'Stability geometry of the scalar model'),
    h('ul', { class: 'cards' },
      h('li', {}, h('a', { href: 'regions.html' }, 'Stability regions (figure 5)'), h('small', {}, ' where external and internal recall are stable')),
      h('li', {}, h('a', { href: 'anisotropy.html' }, 'Anisotropy of projected points (table 3)'), h('small', {}, ' our exact projection against the paper')),
      h('li', {}, h('a', { href: 'phase.html' }, 'Phase portraits (figure 2)'), h('small', {}, ' trajectories of a diagonal linear map')))),
  h('section', {}, h('h2', {}, 'Training runs'),
    h('ul', { class: 'cards' }, h('li', {}, h('a', { href: 'runs.html' }, 'Runs'),
      h('small', {}, ' configs, training curves, accuracy against iterations, analysis; overlay several')))));
rendered();
