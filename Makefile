# Switchboard — build and test entry points. `make run` and `make test` install what is missing.
SHELL := /bin/bash
GO    ?= go
BIN   := build/bin/switchboard
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
DESKTOP_TAGS := desktop,production,webkit2_41

.PHONY: all deps sysdeps frontend-deps node-deps frontend build build-headless run test test-go \
        test-frontend test-e2e test-desktop lint docs bench bench-compare bench-dashboard clean

all: build

# --- dependencies --------------------------------------------------------------------------
sysdeps:
	@bash build/setup-deps.sh

frontend/node_modules/.installed: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
frontend-deps: frontend/node_modules/.installed

test/node/node_modules/.installed: test/node/package-lock.json
	cd test/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
node-deps: test/node/node_modules/.installed

deps: sysdeps frontend-deps node-deps
	$(GO) mod download

# --- build ---------------------------------------------------------------------------------
frontend: frontend-deps
	cd frontend && npm run build

# The desktop binary: Wails window + tray, dashboard embedded. Needs GTK/WebKit dev packages.
build: sysdeps frontend
	CGO_ENABLED=1 $(GO) build -tags $(DESKTOP_TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) .

# A pure-Go binary without the desktop UI (serve, connect, call, headless dashboard).
build-headless: frontend
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o build/bin/switchboard-headless .

run: build
	./$(BIN) $(ARGS)

docs:
	CGO_ENABLED=0 $(GO) run . tools --markdown > docs/tools.md

# --- tests ---------------------------------------------------------------------------------
test: deps lint test-go test-frontend test-e2e test-desktop
	@echo "make test: all suites passed"

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './frontend/node_modules/*')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags $(DESKTOP_TAGS) ./app/...

# Go unit + integration tests, pure Go (no GTK needed). The node-driven integration tests
# (TypeScript SDK client, MCP conformance suite) run here too once test/node is installed.
test-go: node-deps frontend
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 20m ./...

test-frontend: frontend-deps
	cd frontend && npm test

test-e2e: frontend-deps frontend
	@if [ -d frontend/e2e ] && ls frontend/e2e/*.spec.* >/dev/null 2>&1; then cd frontend && npm run e2e; else echo "test-e2e: no end-to-end specs"; fi

# The desktop flavour: the real systray item on a private bus (cgo), then the smoke test of the
# built binary under Xvfb with a DBus session and a tray host.
test-desktop: build
	CGO_ENABLED=1 $(GO) test -tags $(DESKTOP_TAGS) -count=1 -run Systray ./app/tray
	bash build/desktop-smoke.sh $(BIN)

# --- benchmarks ----------------------------------------------------------------------------
bench:
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchmem -count=1 ./internal/... ./mcp/...

bench-compare: node-deps
	node build/bench/mcp_bench.mjs --docs docs/benchmarks.md
	node build/bench/rss_1gb.mjs
	node build/bench/webview_bench.mjs --docs docs/benchmarks.md

# Dashboard responsiveness under a process output flood (docs/benchmarks.md, flood section).
bench-dashboard: frontend-deps frontend
	node frontend/e2e/bench/flood.mjs

clean:
	rm -rf build/bin frontend/dist/* build/test-artifacts
