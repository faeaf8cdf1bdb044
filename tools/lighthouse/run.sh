#!/usr/bin/env bash
# Starts catsrv on DB, scores the signed-in dashboard with Lighthouse
# (score.mjs) and stops the server. Usage (from the repository root, after
# `make build`): tools/lighthouse/run.sh [DB] [ADDR]. The database must hold
# CAT demo's interactions (make run seeds one; for a size:
# bin/catsrv demo --interactions N --cats demo --days 90 --seed 1 |
# bin/catsrv import --config ./configs --db DB -).
set -euo pipefail
db=${1:-sqlite:./data/catsrv.db}
addr=${2:-127.0.0.1:8091}
export CATSRV_JWT_SECRET=${CATSRV_JWT_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
(cd tools/lighthouse && npm ci --no-audit --no-fund --ignore-scripts >/dev/null)
./bin/catsrv serve --config ./configs --db "$db" --addr "$addr" >/tmp/catsrv-lighthouse.log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
	curl -fsS "http://$addr/readyz" >/dev/null 2>&1 && break
	sleep 0.5
done
token=$(./bin/catsrv token --config ./configs --subject lighthouse --role admin --ttl 1h | tail -n 1)
CATSRV_URL="http://$addr" CATSRV_TOKEN="$token" CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium} \
	node tools/lighthouse/score.mjs
