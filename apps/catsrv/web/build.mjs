// Builds the dashboard into dist/: the page's script and the stylesheet
// under fingerprinted names (app.<hash>.js, style.<hash>.css) that
// index.html references, so the server can cache them for good; Chart.js
// as a chunk of its own (chartjs.<hash>.js, an ES module) that the script
// imports when the first chart comes into view; a gzip copy of each (.gz,
// served when the browser accepts gzip); and the favicon.
// Run with `npm run build` (make web).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync, constants } from 'node:zlib';

const out = 'dist';
rmSync(out, { recursive: true, force: true });
mkdirSync(out);

// hashed names a file by the first 10 hex digits of its SHA-256.
const hashed = (name, data) => {
  const h = createHash('sha256').update(data).digest('hex').slice(0, 10);
  return name.replace(/\.(js|css)$/, `.${h}.$1`);
};
const gz = (data) => gzipSync(data, { level: constants.Z_BEST_COMPRESSION, mtime: 0 });
const common = { bundle: true, minify: true, target: 'es2020', write: false };

// The chunk first: the page's script is built with its address.
const chunk = (await build({ ...common, entryPoints: ['src/chartjs.js'], format: 'esm' })).outputFiles[0].contents;
const chunkFile = hashed('chartjs.js', chunk);
writeFileSync(`${out}/${chunkFile}`, chunk);
writeFileSync(`${out}/${chunkFile}.gz`, gz(chunk));

const bundle = await build({
  ...common, entryPoints: ['src/main.js'], format: 'iife',
  define: { CHARTJS_URL: JSON.stringify(`/ui/${chunkFile}`) }, external: ['/ui/*'], metafile: true,
});
if (Object.keys(bundle.metafile.inputs).some((f) => f.includes('node_modules/chart.js/'))) {
  throw new Error('app.js bundles Chart.js, which belongs in the chunk (import it from src/chartjs.js only)');
}
const app = bundle.outputFiles[0].contents;
const assets = {
  'app.js': app,
  'style.css': readFileSync('src/style.css'),
};

let html = readFileSync('src/index.html', 'utf8');
for (const [name, data] of Object.entries(assets)) {
  const file = hashed(name, data);
  writeFileSync(`${out}/${file}`, data);
  writeFileSync(`${out}/${file}.gz`, gz(data));
  if (!html.includes(`/ui/${name}"`)) throw new Error(`index.html does not reference /ui/${name}`);
  html = html.replace(`/ui/${name}"`, `/ui/${file}"`);
}
writeFileSync(`${out}/index.html`, html);
writeFileSync(`${out}/index.html.gz`, gz(html));
writeFileSync(`${out}/favicon.svg`, readFileSync('src/favicon.svg'));
console.log(readdirSync(out).join('\n'));
