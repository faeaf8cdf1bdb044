// Builds the dashboard into dist/: the bundle and the stylesheet under
// fingerprinted names (app.<hash>.js, style.<hash>.css) that index.html
// references, so the server can cache them for good; a gzip copy of each
// (.gz, served when the browser accepts gzip); and the favicon.
// Run with `npm run build` (make web).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync, constants } from 'node:zlib';

const out = 'dist';
rmSync(out, { recursive: true, force: true });
mkdirSync(out);

const bundle = await build({
  entryPoints: ['src/main.js'], bundle: true, minify: true, format: 'iife', target: 'es2020', write: false,
});
const assets = {
  'app.js': bundle.outputFiles[0].contents,
  'style.css': readFileSync('src/style.css'),
};

// hashed names a file by the first 10 hex digits of its SHA-256.
const hashed = (name, data) => {
  const h = createHash('sha256').update(data).digest('hex').slice(0, 10);
  return name.replace(/\.(js|css)$/, `.${h}.$1`);
};
const gz = (data) => gzipSync(data, { level: constants.Z_BEST_COMPRESSION, mtime: 0 });

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
