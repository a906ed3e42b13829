# Switchboard — build and test entry points. `make run` and `make test` install what is missing.
SHELL := /bin/bash
GO    ?= go
BIN   := build/bin/switchboard
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
DESKTOP_TAGS := desktop,production,webkit2_41
TYGO  := build/bin/tygo

.PHONY: all deps sysdeps sysdeps-build frontend-deps node-deps client-deps lsp-deps frontend build build-headless run test test-go \
        test-clients test-frontend test-e2e test-desktop lint lint-fmt lint-mod lint-vet lint-vet-linux \
        lint-vet-desktop lint-vet-darwin lint-vet-windows lint-golangci docs types bench bench-compare bench-upstream bench-code bench-code-deps bench-tokens bench-dashboard clean \
        install uninstall package test-package

all: build

# --- dependencies --------------------------------------------------------------------------
sysdeps:
	@bash build/setup-deps.sh

# Only what building and running need (make build, make run); `make test` installs the rest.
sysdeps-build:
	@bash build/setup-deps.sh --build

frontend/node_modules/.installed: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
frontend-deps: frontend/node_modules/.installed

test/node/node_modules/.installed: test/node/package-lock.json
	cd test/node && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
node-deps: test/node/node_modules/.installed

# The client matrix (test/clients): Claude Code, Gemini CLI, Codex and the AI SDK MCP client,
# pinned in their own npm project so test/node stays lean (~1 GB: the CLIs ship native binaries).
# No install scripts run (test/clients/.npmrc); see docs/clients.md.
test/clients/node_modules/.installed: test/clients/package-lock.json
	cd test/clients && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
client-deps: test/clients/node_modules/.installed

# Language servers the code-intelligence tests (internal/code) run for real, pinned: gopls from
# the Go module proxy into $(go env GOPATH)/bin, typescript-language-server, typescript and
# pyright from npm in test/lsp (clangd comes from Debian: build/setup-deps.sh).
GOPLS_VERSION := v0.23.0
GOPLS := $(shell $(GO) env GOPATH 2>/dev/null)/bin/gopls
$(GOPLS).$(GOPLS_VERSION):
	$(GO) install golang.org/x/tools/gopls@$(GOPLS_VERSION)
	@rm -f $(GOPLS).v* && touch $@
test/lsp/node_modules/.installed: test/lsp/package-lock.json
	cd test/lsp && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
lsp-deps: $(GOPLS).$(GOPLS_VERSION) test/lsp/node_modules/.installed

deps: sysdeps frontend-deps node-deps client-deps lsp-deps $(TYGO)
	$(GO) mod download

# --- build ---------------------------------------------------------------------------------
frontend: frontend-deps
	cd frontend && npm run build

# The desktop binary: Wails window + tray, dashboard embedded. Needs GTK/WebKit dev packages.
build: sysdeps-build frontend
	CGO_ENABLED=1 $(GO) build -tags $(DESKTOP_TAGS) -ldflags "$(LDFLAGS)" -o $(BIN) .

# A pure-Go binary without the desktop UI (serve, connect, call, headless dashboard).
build-headless: frontend
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o build/bin/switchboard-headless .

run: build
	./$(BIN) $(ARGS)

# --- install / package ---------------------------------------------------------------------
# `make install`: the desktop binary, its menu entry and icons under PREFIX (default ~/.local, no
# root needed; PREFIX=/usr/local as root), DESTDIR for staging. build/install.sh does the work and
# writes PREFIX/share/switchboard/install-manifest.txt; `make uninstall` removes what it lists.
# BIN=path installs another binary; a missing $(BIN) is built first.
PREFIX  ?= $(HOME)/.local
DESTDIR ?=
install:
	@if [ ! -x "$(BIN)" ]; then $(MAKE) build; fi
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" BIN="$(BIN)" bash build/install.sh install

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" bash build/install.sh uninstall

# `make package`: build/dist/switchboard_<version>_<arch>.deb and .rpm of the desktop build, made by
# nfpm (pinned in build/tools/nfpm, built into build/bin) from build/nfpm.yaml; build/package.sh
# stages the files with build/install.sh (PREFIX=/usr) and generates the man page.
NFPM := build/bin/nfpm
$(NFPM): build/tools/nfpm/go.mod build/tools/nfpm/go.sum
	cd build/tools/nfpm && $(GO) build -o ../../bin/nfpm github.com/goreleaser/nfpm/v2/cmd/nfpm

package: build $(NFPM)
	VERSION="$(VERSION)" BIN="$(BIN)" NFPM="$(NFPM)" bash build/package.sh

# Installs the .deb with apt-get (root), runs `switchboard version` and `doctor`, launches the menu
# entry to the tray and window, connects the real Claude Code CLI to the installed hub (client-deps),
# removes it.
test-package: package client-deps
	bash build/test-package.sh

docs:
	CGO_ENABLED=0 $(GO) run . tools --markdown > docs/tools.md

# The dashboard's TypeScript types, generated from the Go structs by tygo (pinned in build/tools;
# config build/tygo.yaml), then the dashboard's controls from their table (app/controls.go) by
# build/gencontrols: the Wails bindings (app/desktop/bindings_gen.go) and the TypeScript client
# (frontend/src/lib/generated/control.ts). frontend/types_test.go and build/gencontrols' test fail
# when the committed files are stale.
$(TYGO): build/tools/go.mod build/tools/go.sum
	cd build/tools && $(GO) build -o ../bin/tygo github.com/gzuidhof/tygo
types: $(TYGO)
	rm -f frontend/src/lib/generated/*.ts
	GOOS=linux GOARCH=amd64 CGO_ENABLED=0 $(TYGO) generate --config build/tygo.yaml
	CGO_ENABLED=0 $(GO) run ./build/gencontrols

# --- tests ---------------------------------------------------------------------------------
test: deps lint test-go test-frontend test-e2e test-desktop test-package
	@echo "make test: all suites passed"

# --- lint ----------------------------------------------------------------------------------
# `make lint` is cheap to re-run: golangci-lint is built into build/bin once (again only when the
# pins in build/tools change), and go vet and golangci-lint reuse their caches. Each step says
# what it checks and, when it fails, how to fix it. Run one step alone with e.g. `make lint-vet`.
GOLANGCI_LINT := build/bin/golangci-lint
LINT_GOOS     := darwin windows

# Rebuilt when the pins change or the Go toolchain does (a linter built by an older Go cannot
# load code that needs a newer one); the stamp file names the toolchain it was built with.
GOLANGCI_STAMP := build/bin/.golangci-lint.$(shell $(GO) env GOVERSION 2>/dev/null)

$(GOLANGCI_STAMP):
	@mkdir -p build/bin && rm -f build/bin/.golangci-lint.* && touch $@

$(GOLANGCI_LINT): build/tools/go.mod build/tools/go.sum $(GOLANGCI_STAMP)
	@echo "lint: building golangci-lint from build/tools (pinned there)"
	cd build/tools && $(GO) build -o ../bin/golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

lint: lint-fmt lint-mod lint-vet lint-golangci
	@echo "make lint: all checks passed"

lint-fmt:
	@echo "lint: gofmt"
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './frontend/node_modules/*')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed (run gofmt -w on these):"; echo "$$unformatted"; exit 1; fi

lint-mod:
	@echo "lint: go mod tidy -diff (., build/tools and build/tools/nfpm)"
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum not tidy: run 'go mod tidy'"; exit 1; }
	@cd build/tools && $(GO) mod tidy -diff || { echo "build/tools/go.mod not tidy: run 'cd build/tools && go mod tidy'"; exit 1; }
	@cd build/tools/nfpm && $(GO) mod tidy -diff || { echo "build/tools/nfpm/go.mod not tidy: run 'cd build/tools/nfpm && go mod tidy'"; exit 1; }

# Linux (with and without the desktop tags), then the other systems the code must build on.
# Separate targets, so `make -j4 lint` vets them side by side.
lint-vet: lint-vet-linux lint-vet-desktop $(addprefix lint-vet-,$(LINT_GOOS))

lint-vet-linux:
	@echo "lint: go vet (linux)"
	@$(GO) vet ./...

lint-vet-desktop:
	@echo "lint: go vet (linux, -tags $(DESKTOP_TAGS), ./app/...)"
	@$(GO) vet -tags $(DESKTOP_TAGS) ./app/...

$(addprefix lint-vet-,$(LINT_GOOS)): lint-vet-%:
	@echo "lint: go vet (GOOS=$* CGO_ENABLED=0)"
	@GOOS=$* CGO_ENABLED=0 $(GO) vet ./... || { echo "GOOS=$*: gate Unix-only code with build tags and give it a _other.go that says 'not supported' (see internal/process/platform_*.go)"; exit 1; }

lint-golangci: $(GOLANGCI_LINT)
	@echo "lint: golangci-lint (.golangci.yml)"
	@CGO_ENABLED=0 $(GOLANGCI_LINT) run ./...

# Go unit + integration tests, pure Go (no GTK needed). The node-driven integration tests
# (TypeScript SDK client, MCP conformance suite) run here too once test/node is installed, and
# the client matrix (test/clients: real agent CLIs) once test/clients is.
test-go: node-deps client-deps lsp-deps frontend
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 20m ./...

# Just the client matrix (docs/clients.md); CLIENTS=claude-code,gemini-cli/http narrows it.
test-clients: client-deps
	SWITCHBOARD_MATRIX=$(CLIENTS) CGO_ENABLED=0 $(GO) test -count=1 -timeout 30m -v ./test/clients

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

# Proxy overhead of upstream servers ([[servers]]): a proxied server-everything `echo` against the
# same call made directly and through mcp-hub, and hub memory with 10 servers and 20 clients
# (docs/benchmarks.md, upstream section).
bench-upstream: node-deps
	node build/bench/upstream_bench.mjs --docs docs/benchmarks.md

# Code intelligence (code_* over the pool's gopls) against the LSP-over-MCP bridges cclsp and
# @mizchi/lsmcp, pinned in build/bench/code (their own npm project, with Node 22 for lsmcp), every
# target on the pinned gopls (docs/benchmarks.md, code intelligence section). Not part of `make test`.
build/bench/code/node_modules/.installed: build/bench/code/package-lock.json
	cd build/bench/code && npm ci --no-audit --no-fund --loglevel=error
	@touch $@
bench-code-deps: build/bench/code/node_modules/.installed

bench-code: $(GOPLS).$(GOPLS_VERSION) bench-code-deps
	node build/bench/code_bench.mjs --docs docs/benchmarks.md

# What a session receives before its first word, per tools mode, with 0, 3 and 10 upstream servers,
# then the task suite (tasks.mjs: twelve tasks as direct calls and as one script_run, through a hub
# built from this checkout; gopls for the callers task), counted in o200k tokens (gpt-tokenizer,
# pinned in build/bench/tokens; docs/benchmarks.md).
build/bench/tokens/node_modules/.installed: build/bench/tokens/package-lock.json
	cd build/bench/tokens && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

bench-tokens: build/bench/tokens/node_modules/.installed node-deps $(GOPLS).$(GOPLS_VERSION)
	rm -rf build/bench/tokens/out && mkdir -p build/bench/tokens/out
	SWITCHBOARD_CATALOGUE_OUT=$(CURDIR)/build/bench/tokens/out $(GO) test ./mcp -run TestCatalogueFigures -count=1
	node build/bench/tokens/count.mjs build/bench/tokens/out
	node build/bench/tokens/tasks.mjs

# Dashboard responsiveness under a process output flood (docs/benchmarks.md, flood section).
bench-dashboard: frontend-deps frontend
	node frontend/e2e/bench/flood.mjs

clean:
	rm -rf build/bin build/dist frontend/dist/* build/test-artifacts
