#!/usr/bin/env bash
# Rebuilds apps/catsrv/web/apidocs, the API reference page's assets that the
# binary embeds (/docs), from the @stoplight/elements package that
# package-lock.json pins: its web components and stylesheet, gzip-compressed
# (-9, no name or time stamp, so a rebuild is byte-identical), and its
# licence. Run by `make apidocs`; needs Node.js and npm.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
pkg=node_modules/@stoplight/elements
version=$(node -p "require('./$pkg/package.json').version")
out=../../apps/catsrv/web/apidocs
rm -rf "$out" && mkdir -p "$out"
gzip -9 -n -c "$pkg/web-components.min.js" > "$out/elements-$version.js.gz"
gzip -9 -n -c "$pkg/styles.min.css" > "$out/elements-$version.css.gz"
cat "$pkg/LICENSE" "$pkg/web-components.min.js.LICENSE.txt" > "$out/LICENSE.txt"
ls -l "$out"
