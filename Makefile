# Outpost — build, run and test. `make run` and `make test` are the two
# commands a fresh machine needs (README).

GO      ?= go
VERSION ?= 0.1.0
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X outpost/appliance.version=$(VERSION) -X outpost/appliance.commit=$(COMMIT)
BIN     := bin/outpost

# os/arch[/arm version] -> dist/outpost-<suffix>
CROSS := linux/arm/6:linux-armv6 linux/arm/7:linux-armv7 linux/arm64:linux-arm64 \
         linux/amd64:linux-amd64 windows/amd64:windows-amd64.exe

.PHONY: all run build test deps vet race hostile large cross lint bench bench-full fuzz soak clean

all: build

## run: build and run the server with the embedded defaults (data in ./outpost-data, all listeners)
run: build
	./$(BIN) run

## build: the static binary for this machine
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/outpost

## test: install what the tests need, then vet, every test with -race, the hostile-client tests, the large-blob test, the cross build
test: deps vet race hostile large cross

deps:
	./scripts/test-deps.sh

vet:
	$(GO) vet ./...

race:
	CGO_ENABLED=1 OUTPOST_INTEROP=1 $(GO) test -race -timeout 30m ./...

# The hostile-client tests measure the bystanders' latency: no race detector
# (they are excluded from the -race run by a build tag). RELIABILITY.md.
hostile:
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m ./appliance/hostile

## soak: the long versions of the hostile-client tests
soak:
	CGO_ENABLED=0 OUTPOST_SOAK=1 $(GO) test -count=1 -timeout 60m -v ./appliance/hostile

# The 300 MiB blob test skips itself under -race (too slow there); run it plainly.
large:
	CGO_ENABLED=0 $(GO) test -count=1 -run 'TestBlobLarge' -timeout 20m -v ./appliance/store

## cross: CGO_ENABLED=0 binaries for linux arm v6/v7, arm64, amd64 and windows/amd64 into dist/
cross:
	@mkdir -p dist
	@set -e; for t in $(CROSS); do \
		target=$${t%%:*}; out=dist/outpost-$${t##*:}; \
		os=$$(echo $$target | cut -d/ -f1); arch=$$(echo $$target | cut -d/ -f2); arm=$$(echo $$target | cut -d/ -f3); \
		echo "cross $$target -> $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOARM=$$arm $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $$out ./cmd/outpost; \
	done
	@ls -l dist

## lint: gofmt, go vet, and staticcheck when installed
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck ./...; else echo "staticcheck not installed; skipped"; fi

## bench: the codec, broker and store benchmarks, then short load scenarios S1-S4 against the real binary (see BENCHMARKS.md)
bench:
	@status=0; \
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./appliance/cot ./appliance/broker ./appliance/store || status=1; \
	./scripts/bench/all.sh short || status=1; \
	exit $$status

## bench-full: the load scenarios at full size, 3 runs each with medians (about half an hour; BENCHMARKS.md)
bench-full:
	./scripts/bench/all.sh full

## fuzz: a short run of every fuzzer
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode$$ -fuzztime 30s ./appliance/cot
	$(GO) test -run '^$$' -fuzz FuzzStreamDecoder -fuzztime 30s ./appliance/cot
	$(GO) test -run '^$$' -fuzz FuzzProtoFrames -fuzztime 30s ./appliance/cot
	$(GO) test -run '^$$' -fuzz FuzzParseCSR -fuzztime 30s ./appliance/marti

clean:
	rm -rf bin dist
