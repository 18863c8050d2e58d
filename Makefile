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

.PHONY: all run build console test deps vet race hostile journey large large-blob large-sync cross deb release smoke pkgtest lint bench bench-full federation-sim fuzz soak clean

# Debian architecture=binary of each package (armhf carries the GOARM=6
# build: it runs on every Raspberry Pi, ARMv6 included).
DEB_ARCHES := amd64=dist/outpost-linux-amd64 arm64=dist/outpost-linux-arm64 armhf=dist/outpost-linux-armv6
# Package file times: the commit's, so the same commit gives the same packages.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)

all: build

## run: build and run the server with the embedded defaults (data in ./outpost-data, all listeners)
run: build
	./$(BIN) run

## build: the web console (when Node is installed) and the static binary for this machine
build: console
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/outpost

## console: rebuild web/dist from web/src (needs Node 20 and npm); the result is committed, so
## `go build` alone works without Node
console:
	@if command -v npm >/dev/null 2>&1; then \
		cd web && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && node build.mjs; \
	else echo "npm not found: the committed web/dist is embedded as it is"; fi

## test: install what the tests need, then vet, every test with -race, the hostile-client tests, the
## large tests (300 MiB blob, 1 GiB sync), the cross build, the cross binaries under qemu and Wine, and the packages (contents,
## dpkg install into a throw-away root)
test: deps vet race hostile large cross smoke pkgtest

deps:
	./scripts/test-deps.sh

vet:
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	$(GO) -C scripts/mkdeb vet ./...

# OUTPOST_REQUIRE_TOOLS=1: a test whose tool (systemd-analyze, qemu, Wine,
# dpkg, the npm clients, Chromium) is missing fails instead of skipping;
# scripts/test-deps.sh installs them. It is the one switch tests read
# (testkit.ToolsRequired); the long campaigns are build tags (soak, large,
# smoke), set by their targets below.
race:
	CGO_ENABLED=1 OUTPOST_REQUIRE_TOOLS=1 $(GO) test -race -timeout 30m ./...

# The hostile-client tests measure the bystanders' latency: no race detector
# (they are excluded from the -race run by a build tag). RELIABILITY.md.
hostile:
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m ./appliance/hostile

## journey: the five-minute journey alone, printing the seconds each step took (README "Five
## minutes to a connected team"); `make test` runs it too, within the -race run
journey:
	CGO_ENABLED=0 OUTPOST_REQUIRE_TOOLS=1 $(GO) test -count=1 -run TestFiveMinuteJourney -v ./appliance/journey

## soak: the long versions of the hostile-client tests, then the growth soak: mixed CoT load, REST,
## missions and uploads for DURATION (default 10m), failing if memory, goroutines, open files or the
## database keep growing (RELIABILITY.md)
soak:
	CGO_ENABLED=0 $(GO) test -tags soak -count=1 -timeout 60m -v ./appliance/hostile
	CGO_ENABLED=0 $(GO) test -tags soak -count=1 -timeout 0 -v ./appliance/soak -args -soak.duration=$(or $(DURATION),10m)

# The large tests run without the race detector: the 300 MiB blob test (it
# skips itself under -race), and a 1 GiB file through the client API's
# enterprise sync, up and down, with the server's throughput and peak RSS
# (BENCHMARKS.md). The latter needs about 2 GiB of free disk for a moment.
large: large-blob large-sync

large-blob:
	CGO_ENABLED=0 $(GO) test -count=1 -run 'TestBlobLarge' -timeout 20m -v ./appliance/store

## large-sync: 1 GiB up and down through /Marti/sync/upload and /Marti/sync/content on the real binary
large-sync:
	CGO_ENABLED=0 $(GO) test -tags large -count=1 -run 'TestLargeFileStreaming' -timeout 20m -v ./appliance/marti

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

## deb: Debian packages for amd64, arm64 and armhf into dist/ (scripts/mkdeb: nfpm, packaging/nfpm.yaml)
deb: cross
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) -C scripts/mkdeb run . -root ../.. -version $(VERSION) -out dist $(DEB_ARCHES)

## release: a clean dist/ with the five binaries, the three packages and SHA256SUMS
release:
	rm -rf dist
	$(MAKE) deb
	cd dist && sha256sum outpost-* outpost_*.deb > SHA256SUMS
	@cat dist/SHA256SUMS

## smoke: linux/arm (GOARM=6) and arm64 under qemu-user-static, windows/amd64 under Wine (run and service)
smoke:
	OUTPOST_REQUIRE_TOOLS=1 $(GO) test -tags smoke -count=1 -timeout 10m -v -run 'TestARM|TestWindows' ./appliance/smoke

## pkgtest: every package's fields, files, modes and conffile; dpkg install, upgrade, remove, purge in a throw-away root
pkgtest:
	OUTPOST_REQUIRE_TOOLS=1 $(GO) -C scripts/mkdeb test -count=1 -timeout 10m -v ./...

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

## federation-sim: four Outposts on loopback in a star and in a chain, 100 clients each, every
## client receiving every other's position: lost, p99 per hop, servers' CPU per delivery; 3 runs
## each (about 6 minutes; BENCHMARKS.md "Federation")
federation-sim:
	$(GO) test -run '^$$' -bench FederationSim -benchtime 1x -count 3 -timeout 30m ./appliance/e2e

## fuzz: a short run of every fuzzer
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode$$ -fuzztime 30s ./appliance/cot
	$(GO) test -run '^$$' -fuzz FuzzStreamDecoder -fuzztime 30s ./appliance/cot
	$(GO) test -run '^$$' -fuzz FuzzProtoFrames -fuzztime 30s ./appliance/cot
	$(GO) test -run '^$$' -fuzz FuzzParseCSR -fuzztime 30s ./appliance/marti
	$(GO) test -run '^$$' -fuzz FuzzV1Frames -fuzztime 30s ./appliance/federation
	$(GO) test -run '^$$' -fuzz FuzzROLProgram -fuzztime 30s ./appliance/federation

clean:
	rm -rf bin dist
