// Copies the front end's two libraries from node_modules into web/vendor/, which is committed,
// so that the pages work with no network and no npm: uPlot (charts) and KaTeX (TeX; only the
// woff2 fonts, which every browser the lab targets reads). Run `npm ci && npm run vendor` in
// web/ after changing a version in package.json.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const nm = join(web, 'node_modules');
const out = join(web, 'vendor');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'katex', 'fonts'), { recursive: true });
const copy = (from, to) => cpSync(join(nm, from), join(out, to));
copy('uplot/dist/uPlot.iife.min.js', 'uPlot.iife.min.js');
copy('uplot/dist/uPlot.min.css', 'uPlot.min.css');
copy('uplot/LICENSE', 'uPlot.LICENSE');
copy('katex/dist/katex.min.js', 'katex/katex.min.js');
copy('katex/dist/katex.min.css', 'katex/katex.min.css');
copy('katex/LICENSE', 'katex/LICENSE');
for (const f of readdirSync(join(nm, 'katex/dist/fonts')))
  if (f.endsWith('.woff2')) copy(`katex/dist/fonts/${f}`, `katex/fonts/${f}`);
console.log('vendored uPlot and KaTeX into', out);
