# catsrv — see README.md. Every target works on a machine with only Go.
SHELL := /bin/bash
GO ?= go
BIN := bin/catsrv
GOBIN := $(shell $(GO) env GOPATH)/bin
GOLANGCI_LINT_VERSION := v2.15.0
CONFIG_DIR ?= ./configs
DB ?= sqlite:./data/catsrv.db
ADDR ?= 127.0.0.1:8080
DEMO_INTERACTIONS ?= 50000

.PHONY: all build image apidocs run test test-short test-race fuzz lint lint-openapi vet generate bench bench-go clean tools web lighthouse

all: build

# VERSION and COMMIT are what `catsrv version`, the OpenAPI document, the
# trace resource and catsrv_build_info report (apps/catsrv/internal/buildinfo):
# the tag at HEAD (v1.2.0) or dev, and HEAD's commit; without git, dev and
# unknown.
VERSION ?= $(shell git describe --tags --exact-match --match 'v*' 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILDINFO := github.com/catsrv/catsrv/apps/catsrv/internal/buildinfo
LDFLAGS := -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./apps/catsrv

# image: the container image of Containerfile (FROM scratch), built with
# podman from bin/image: the static binary (CGO_ENABLED=0, the version in
# -ldflags), the CA bundle of this host, the shipped configs and an empty
# data directory. No registry is needed. PODMAN_FLAGS defaults to the vfs
# storage driver, which works in containers and unprivileged sandboxes.
IMAGE ?= catsrv:$(VERSION)
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
PODMAN ?= podman
PODMAN_FLAGS ?= --storage-driver vfs
image:
	rm -rf bin/image && mkdir -p bin/image/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/image/catsrv ./apps/catsrv
	cp $(CA_BUNDLE) bin/image/ca-certificates.crt
	cp -r $(CONFIG_DIR) bin/image/configs
	$(PODMAN) $(PODMAN_FLAGS) build --format docker -f Containerfile -t $(IMAGE) bin/image

# run: build, seed a demo CAT with demo data on the embedded SQLite (first run
# only), print the URL and an admin token, then serve. Without
# CATSRV_JWT_SECRET, the secret is data/jwt-secret (CATSRV_JWT_SECRET_FILE's
# default), written once: tokens outlive a restart, and `bin/catsrv token`
# run from this directory signs with it too.
run: build
	@mkdir -p data
	@if [ -z "$$CATSRV_JWT_SECRET" ] && [ ! -s data/jwt-secret ]; then \
		echo "CATSRV_JWT_SECRET is not set: keeping a random secret in data/jwt-secret (mode 0600) for this and later runs."; \
		(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > data/jwt-secret) || exit 1; \
	fi; \
	if [ ! -f data/catsrv.db ]; then \
		echo "Seeding $(DEMO_INTERACTIONS) demo interactions for CAT 'demo'..."; \
		./$(BIN) demo --interactions $(DEMO_INTERACTIONS) --cats demo --days 90 --seed 1 \
			| ./$(BIN) import --config $(CONFIG_DIR) --db $(DB) - || exit 1; \
	fi; \
	token=$$(./$(BIN) token --config $(CONFIG_DIR) --subject demo-admin --role admin --ttl 24h | tail -n 1) || exit 1; \
	echo; \
	echo "Dashboard: http://$(ADDR)/  (sign in with the admin token below)"; \
	echo "catsrv: http://$(ADDR)/docs  (OpenAPI: http://$(ADDR)/openapi.json)"; \
	echo "Admin token (24h):"; echo "$$token"; \
	echo "Try: curl -H \"Authorization: Bearer $$token\" 'http://$(ADDR)/api/v1/analytics/all_warehouse?catname=demo'"; \
	echo; \
	exec ./$(BIN) serve --config $(CONFIG_DIR) --db $(DB) --addr $(ADDR)

# test: every test. PostgreSQL tests run when CATSRV_TEST_POSTGRES_DSN is set
# (and fail instead of skipping when CI=true and it is not); the TypeScript
# client test when node and npm are found (it runs npm ci in tools/tsclient).
test:
	$(GO) test -count=1 ./...

# test-short: the tests a contributor runs all day: the browser, npm
# (TypeScript client) and 10M-scale tests skip under -short.
test-short:
	$(GO) test -count=1 -short ./...

# test-race: every test under -short with the race detector (the browser,
# npm and 10M tests it leaves out run in make test; they add time, not
# concurrency). The detector slows the SQL adapters' suites several times
# over; the package time-out is raised from go test's 10 minutes so a
# loaded machine does not turn slowness into a failure.
test-race:
	$(GO) test -count=1 -race -short -timeout 20m ./...

# fuzz: each fuzz target for its number of executions (README.md, Fuzz
# tests), about 10 s each on a quiet 2-core machine. A count, not a duration:
# Go 1.26's coordinator can fail a duration-bounded run with "context
# deadline exceeded" and no failing input when its workers are starved at
# the deadline (golang/go#75804, fixed in Go 1.27); a count has no deadline.
# FUZZTIME=30s (or 1000000x) overrides every target's budget. A failing input
# is written to the package's testdata/fuzz/<target>/: fix the bug and
# commit the file, it becomes a regression test of `make test`.
FUZZTIME ?=
FUZZ_TARGETS := \
	./codec/jsonl:FuzzDecode:100000x \
	./codec/jsonl:FuzzFastPath:200000x \
	./codec/jsonl:FuzzDecodeArray:200000x \
	./apps/catsrv/internal/httpapi/chatapi:FuzzConversationID:5000x \
	./apps/catsrv/internal/httpapi/chatapi:FuzzConversationCursor:5000x \
	./apps/catsrv/internal/httpapi/chatapi:FuzzConversationCat:3000x \
	./adapters/mcp:FuzzName:50000x \
	./apps/catsrv/internal/httpapi/analyticsapi:FuzzAnalyticsQuery:5000x \
	./apps/catsrv/internal/httpapi/chatapi:FuzzChatBody:5000x \
	./adapters/oidc:FuzzIDToken:8000x \
	./apps/catsrv/internal/httpapi/authapi:FuzzEraseUser:3000x \
	./apps/catsrv/internal/httpapi/base:FuzzAcceptsGzip:10000x \
	./core/chat/toolpolicy:FuzzParse:20000x \
	./adapters/openai:FuzzLimitedBody:20000x \
	./core/knowledge:FuzzParse:3000x \
	./apps/catsrv/internal/httpapi/openaiapi:FuzzCompletionBody:20000x
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
		budget=$${FUZZTIME:-$$budget}; \
		echo "== $$name ($$pkg, $$budget)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $$budget $$pkg; \
	done

vet:
	$(GO) vet ./...

lint:
	@if ! command -v golangci-lint >/dev/null && [ ! -x "$(GOBIN)/golangci-lint" ]; then \
		echo "installing golangci-lint $(GOLANGCI_LINT_VERSION)"; \
		$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	fi
	@PATH="$(GOBIN):$$PATH" golangci-lint run ./...

# lint-openapi: Redocly's recommended rules over the OpenAPI document the
# binary serves (docs/api.md, "Linting the document"). Needs Node.js and npm:
# @redocly/cli is installed exactly as tools/openapi-lint/package-lock.json
# pins it. CI runs it; `make test` does not need it.
OPENAPI_LINT := tools/openapi-lint
lint-openapi: build
	./$(BIN) openapi > bin/openapi.json
	cd $(OPENAPI_LINT) && npm ci --no-audit --no-fund --loglevel=error && \
		./node_modules/.bin/redocly lint --config redocly.yaml ../../bin/openapi.json

generate:
	$(GO) generate ./...

# bench: the load benchmark of docs/benchmarks.md. BENCH_SCALE=10m for 10M
# interactions; PostgreSQL runs when BENCH_POSTGRES_DSN or
# CATSRV_TEST_POSTGRES_DSN names a server (a fresh database is created on it).
BENCH_SCALE ?= 1m
BENCH_FLAGS ?=
bench: build
	$(GO) build -o bin/catbench ./apps/catbench
	./bin/catbench --catsrv $(BIN) --scale $(BENCH_SCALE) $(BENCH_FLAGS)

# bench-go: the Go micro-benchmarks (core aggregation, JWT validation, the
# column index, the MCP tool list's cache), summarized by benchstat into
# bin/bench-go.txt.
bench-go:
	@mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./core/analytics/ ./core/auth/tokens/ ./adapters/colindex/ ./adapters/mcp/ ./core/knowledge/ | tee bin/bench-go.raw
	$(GO) run golang.org/x/perf/cmd/benchstat@latest bin/bench-go.raw | tee bin/bench-go.txt

# web: rebuild the admin dashboard (apps/catsrv/web/dist, committed and
# embedded in the binary) from apps/catsrv/web/src. Needs Node.js and npm;
# nothing else does.
web:
	cd apps/catsrv/web && npm ci --no-audit --no-fund && npm run build

# apidocs: rebuild apps/catsrv/web/apidocs, the API reference page's assets
# (/docs: Stoplight Elements, committed and embedded, so the page needs no
# CDN), from the @stoplight/elements that tools/apidocs/package-lock.json
# pins. Needs Node.js and npm; nothing else does.
apidocs:
	tools/apidocs/build.sh

# lighthouse: score the signed-in dashboard (Lighthouse 12, mobile defaults,
# pinned in tools/lighthouse) on LIGHTHOUSE_DB and print the scores and the
# first load's bytes. Needs Node.js, npm and Chromium (CHROME_PATH).
LIGHTHOUSE_DB ?= $(DB)
lighthouse: build
	tools/lighthouse/run.sh $(LIGHTHOUSE_DB)

clean:
	rm -rf bin data
