# kfa: two commands matter. `make run` starts a working server on
# 127.0.0.1:8080 with its data under ./data; `make test` runs every test.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
DATA     ?= ./data
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: run build test lint bench microbench crashtest fuzz help

## run: build kfa and serve on 127.0.0.1:8080 with data in ./data (sample records on first start)
run: build
	./bin/kfa serve --data $(DATA) --seed-samples

## build: build ./bin/kfa with the version stamped in
build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/kfa ./cmd/kfa

## test: every test, with the race detector
test:
	$(GO) test -race -count=1 ./...

## lint: gofmt check, go vet, staticcheck (pinned)
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	 if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## bench: load benchmark: this machine's ceilings vs kfa serve (BENCHFLAGS=--quick: under a minute),
##        then search latency (p50/p99) and throughput at 10k and 100k records (skipped with --quick)
bench:
	$(GO) run ./cmd/kfa-bench $(BENCHFLAGS)
	@case "$(BENCHFLAGS)" in *--quick*) ;; *) $(GO) test -run '^$$' -bench 'BenchmarkSearch' -benchtime 3s ./search ;; esac

## microbench: Go micro-benchmarks of the hot paths
microbench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## crashtest: SIGKILL kfa under load 25 times; every acknowledged write must survive (CI runs 3)
crashtest:
	KFA_CRASH_CYCLES=25 $(GO) test -count=1 -v -run TestCrashRecovery ./crashtest

## fuzz: run every fuzz target for FUZZTIME each (default 1m)
FUZZTIME ?= 1m
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## help: list the targets
help:
	@grep -E '^## ' Makefile | sed 's/## /  /'
