# haroute's build entry points. `make` alone lists the targets.

SHELL := /bin/bash
.DEFAULT_GOAL := help

GO ?= go
# The Go toolchain every build and test runs with: a patch release with the standard library's
# security fixes (make vulncheck fails on a vulnerability the code calls). The go command fetches it
# from the module proxy the first time (go1.26.11 is about 70 MB, 5 s here), whatever Go is installed,
# as long as it is 1.21 or newer. Bump it when govulncheck names a fixed Go version.
export GOTOOLCHAIN := go1.26.11
BIN := bin
# Debian keeps haproxy in /usr/sbin, which is not on every user's PATH; nor is /usr/local/go/bin, where
# Go's own archive installs go (a login shell of a user other than the one who installed it lacks it).
export PATH := $(PATH):/usr/sbin:/sbin:/usr/local/go/bin
# Go keeps its module cache, its build cache and the GOTOOLCHAIN download under $HOME. A user whose
# HOME is not its own (setpriv, or su and sudo -u without a login, keep root's /root, mode 700) cannot
# read them, and go fails before any test: such a user gets caches of its own under the temporary
# directory, which the first run fills from the module proxy (GOPROXY): GOPATH (the module cache and
# the checksum database's, GOPATH/pkg) and GOCACHE. Set them to choose others.
ifeq ($(shell [ -w "$$HOME" ] && echo writable),)
GO_USER_CACHE := $(or $(TMPDIR),/tmp)/haroute-go-$(shell id -u)
export GOPATH ?= $(GO_USER_CACHE)/gopath
export GOCACHE ?= $(GO_USER_CACHE)/build
endif

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)
TEST_TIMEOUT ?= 15m
EXAMPLE_DIR := $(BIN)/example-haproxy
# The e2e control plane (kube-apiserver, etcd) comes from its own module, e2e/tools.
E2E_TOOLS := e2e/tools
E2E_BINS := $(BIN)/kube-apiserver $(BIN)/etcd
# sudo only when not root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Newer HAProxy series for the test matrix, from Debian's suites (series:suite); bookworm's 2.6 is the
# system's /usr/sbin/haproxy. Tests choose the binary through HAROUTE_HAPROXY.
HAPROXY_SERIES := 3.0:trixie 3.2:sid 3.4:experimental
HAPROXY_MATRIX := $(foreach s,$(HAPROXY_SERIES),$(firstword $(subst :, ,$(s))))

.PHONY: help build image-binary image podman image-check haproxy haproxy-versions iproute2 demo test unit render-example fmt clean e2e-bin

help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/haroute (version from git describe, or "dev")
	@[ -e $(BIN)/haroute ] || echo "building $(BIN)/haroute: the first build downloads and compiles the Go modules, which takes a few minutes on a fresh machine"
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/haroute ./cmd/haroute

image-binary: ## build bin/haroute-static: static (no cgo), stripped, for the image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(BIN)/haroute-static ./cmd/haroute

IMAGE ?= haroute:$(VERSION)
image: image-binary ## build the image (Dockerfile: the static binary on scratch) with podman or docker, as $(IMAGE)
	@tool=$$(command -v podman || command -v docker) || { echo "image: needs podman or docker"; exit 1; }; \
		$$tool build -t $(IMAGE) -f Dockerfile .

# podman builds and runs the image in image-check. runc is its OCI runtime there: bookworm's crun 1.8
# refuses hybrid cgroup layouts (see e2e/image). No recommends: buildah, slirp4netns, fuse-overlayfs
# and the rest serve rootless use and networks, which a root build FROM scratch does not need.
podman: ## install Debian's podman and runc (for image-check) when either is missing
	@{ command -v podman && command -v runc; } >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman runc >/dev/null; }

image-check: podman image-binary ## build the image with podman and run it: config, its one file, version, run --once (as root)
	$(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) ./e2e/image/

haproxy: ## install Debian's haproxy package when haproxy is missing
	@command -v haproxy >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y haproxy; }
	@haproxy -v | head -n 1

haproxy-versions: ## put HAProxy 3.0 (trixie), 3.2 (sid), 3.4 (experimental) from Debian's packages at bin/haproxy-<series> (kept while they run)
	bash $(E2E_TOOLS)/haproxy-versions.sh $(BIN) $(HAPROXY_SERIES)

iproute2: ## install Debian's iproute2 (ip netns, for the e2e pod networks) when ip is missing
	@command -v ip >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y iproute2; }

demo: build haproxy ## run haroute demo: HAProxy on 127.0.0.1:8080/8443 with example Routes and local backends (DEMO_ARGS to change)
	$(BIN)/haroute demo $(DEMO_ARGS)

test: lint vulncheck golden-check unit fuzz-smoke race e2e matrix image-check ## the whole suite: lint, govulncheck, the golden check, unit and integration tests, a short fuzzing run, the race lane and e2e on 2.6, the HAProxy matrix, then the image (as root)

unit: haproxy ## go vet and the tests of ./... (unit, and integration with the real haproxy)
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/framework/... ./e2e/cluster/...
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# The quick lane: go vet and every test that needs neither root nor network namespaces, in short mode,
# as any user (no sudo, no package installed: it needs go, and haproxy in /usr/sbin or HAROUTE_HAPROXY).
# The tests that need root skip under -short (testkit.NeedsRoot), as do the long soak and exhaustive
# runs; the e2e-tagged suites (cluster, framework, bench, image) are not built.
.PHONY: quick
quick: ## go vet and the tests that need neither root nor network namespaces (go test -short), as any user
	$(GO) vet ./...
	$(GO) test -short -count=1 -timeout $(TEST_TIMEOUT) ./...

.PHONY: layers
layers: ## the import graph: lines per area and package, each package's layer and floor, imports that break the layers (tools/layers)
	$(GO) run ./tools/layers -packages

render-example: build haproxy ## render examples/ into bin/example-haproxy and check it with haproxy -c
	ROUTER_ALLOW_WILDCARD_ROUTES=true $(BIN)/haroute render --manifests examples --haproxy-dir $(EXAMPLE_DIR)
	haproxy -c -f $(EXAMPLE_DIR)/conf/haproxy.cfg -f $(EXAMPLE_DIR)/conf/backends

.PHONY: e2e
e2e: build haproxy iproute2 e2e-bin ## end-to-end scenarios against a real kube-apiserver, and the traces' smoke run (as root: network namespaces)
	$(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) ./e2e/framework/... ./e2e/cluster/...
	$(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) -run '^(TestTracesSmoke|TestTraceLoadJudges)$$' ./e2e/bench/

e2e-bin: $(E2E_BINS) ## build bin/kube-apiserver and bin/etcd from e2e/tools (kept until e2e/tools changes)

# A binary is rebuilt only when it is missing or older than the module's pins or its main.go.
$(E2E_BINS): $(BIN)/%: $(E2E_TOOLS)/go.mod $(E2E_TOOLS)/go.sum $(E2E_TOOLS)/cmd/%/main.go
	@mkdir -p $(BIN)
	cd $(E2E_TOOLS) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(abspath $@) ./cmd/$*

# The side-by-side benchmark against the stock OpenShift router (e2e/bench). The stock router is built
# once from its pinned source (network, or STOCK_ROUTER_SRC=<checkout>) into BENCH_STOCK; its template
# needs HAProxy 2.8+, so both routers run on 3.2. BENCH_ROUTES and BENCH_ENDPOINTS size the workload.
BENCH_STOCK ?= $(BIN)/stock-router
BENCH_ROUTES ?= 1000
BENCH_ENDPOINTS ?= 1
BENCH_TIMEOUT ?= 3h
# Where the tests write their results (e2e/bench/results) for bench-report, and their repeats.
BENCH_OUT ?= $(BIN)/bench
BENCH_REPEATS ?= 3
# Which tests of e2e/bench run (go test -run), e.g. BENCH_RUN=TestTraces; TestTracesSmoke, the tiny
# version of TestTraces that make e2e runs, never does here.
BENCH_RUN ?= .

bench-stock: $(BENCH_STOCK)/openshift-router ## build the stock OpenShift router the benchmark compares with (tools/build-stock-router.sh)

$(BENCH_STOCK)/openshift-router: tools/build-stock-router.sh
	tools/build-stock-router.sh $(BENCH_STOCK)

bench: haproxy-versions build iproute2 e2e-bin bench-stock ## haroute beside the stock router on one API server, then bench-report (as root; BENCH_ROUTES, BENCH_ENDPOINTS, BENCH_REPEATS, BENCH_OUT, BENCH_RUN)
	@mkdir -p $(BENCH_OUT)
	HAROUTE_BENCH_STOCK=$(abspath $(BENCH_STOCK)) HAROUTE_HAPROXY=$(abspath $(BIN))/haproxy-3.2 \
		HAROUTE_BENCH_ROUTES=$(BENCH_ROUTES) HAROUTE_BENCH_ENDPOINTS=$(BENCH_ENDPOINTS) \
		HAROUTE_BENCH_OUT=$(abspath $(BENCH_OUT)) HAROUTE_BENCH_REPEATS=$(BENCH_REPEATS) \
		$(GO) test -tags e2e -count=1 -timeout $(BENCH_TIMEOUT) -v -run '$(BENCH_RUN)' -skip '^TestTracesSmoke$$' ./e2e/bench/
	$(GO) test ./runtime/haproxy -run XXX -bench 'UpdateOneEndpoint|SyncOneEndpoint' -benchmem -benchtime 100x -count 3 > $(BENCH_OUT)/update.txt
	$(MAKE) bench-report

bench-report: ## regenerate docs/bench.md and its plots (docs/bench/) from the results in BENCH_OUT (e2e/bench/report)
	$(GO) run ./e2e/bench/report -in $(BENCH_OUT) -out docs

# The differential suite against the stock router (e2e/parity): the stock router (bench-stock's build)
# and haroute side by side, each with its own HAProxy 3.2, on one API server with the corpus's Routes,
# the same requests through both, compared field by field. It records the stock router's answers into
# e2e/parity/testdata/stock-answers.json (commit the change), which TestReplay, in unit and matrix,
# compares haroute alone with; the report goes to PARITY_OUT (live.txt, live.json). Then TestMixedFleet
# replaces two stock routers by haroute replicas one at a time under load (and one back), every client
# alternating between the replicas; its figures go to PARITY_OUT/fleet.txt.
PARITY_OUT ?= $(BIN)/parity

.PHONY: parity
parity: haproxy-versions build iproute2 e2e-bin bench-stock ## haroute beside the stock router on the parity corpus: record the stock answers, report and fail on an unaccepted difference; then the mixed fleet (as root)
	@mkdir -p $(PARITY_OUT)
	HAROUTE_BENCH_STOCK=$(abspath $(BENCH_STOCK)) HAROUTE_HAPROXY=$(abspath $(BIN))/haproxy-3.2 \
		HAROUTE_PARITY_OUT=$(abspath $(PARITY_OUT)) HAROUTE_E2E_BIN=$(abspath $(BIN)) \
		$(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) -v -run '^(TestParity|TestMixedFleet)$$' ./e2e/parity/live/

# The HAProxy version matrix: bookworm's 2.6 runs everything above; each newer series runs the
# integration tests and a shorter oracle walk, and 3.2 (OpenShift's default, the official image) the
# cluster scenarios too; 3.4 the cluster Route-churn scenario, which proves its runtime backends.
MATRIX_PACKAGES := ./runtime/... ./inspect/metrics/ ./inspect/dataplane/ ./mapping/render/ ./mapping/plan/ ./sync/controller/ ./e2e/traffic/ ./e2e/run/ ./e2e/faults/ ./e2e/parity/
MATRIX_ORACLE_STEPS ?= 100
MATRIX_E2E_SERIES := 3.2

.PHONY: matrix bench bench-stock bench-report
matrix: haproxy-versions build iproute2 e2e-bin ## integration tests and the oracle on HAProxy 3.0, 3.2 and 3.4; the cluster e2e scenarios on 3.2
	@set -e; for v in $(HAPROXY_MATRIX); do \
		bin=$(abspath $(BIN))/haproxy-$$v; \
		echo "== HAProxy $$v: integration tests and the oracle ($(MATRIX_ORACLE_STEPS) steps)"; \
		HAROUTE_HAPROXY=$$bin $(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(MATRIX_PACKAGES); \
		HAROUTE_HAPROXY=$$bin $(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./e2e/oracle/ -oracle.steps $(MATRIX_ORACLE_STEPS); \
	done
	@set -e; for v in $(MATRIX_E2E_SERIES); do \
		echo "== HAProxy $$v: cluster e2e scenarios"; \
		HAROUTE_HAPROXY=$(abspath $(BIN))/haproxy-$$v $(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) ./e2e/framework/... ./e2e/cluster/...; \
	done
	@echo "== HAProxy 3.4: the cluster Route-churn scenario (Routes, timeouts and balance changes without a reload)"
	HAROUTE_HAPROXY=$(abspath $(BIN))/haproxy-3.4 $(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) -run '^TestRouteChurnUnderLoad$$' ./e2e/cluster/

# Golden files: each set is regenerated by its package's tests under -update (every package listed
# in GOLDEN_PACKAGES defines that flag) and lives in one of GOLDEN_DIRS. The orphan tests
# (TestGoldenOrphans) fail on a golden file that no test case produces; under -update they remove it.
GOLDEN_PACKAGES := ./mapping/ ./inspect/views/ ./mapping/compat/
GOLDEN_DIRS := mapping/testdata/golden inspect/views/testdata/golden docs/openshift-compatibility.md

.PHONY: golden golden-check
golden: ## regenerate the golden files
	$(GO) test -count=1 -run '^TestGolden' $(GOLDEN_PACKAGES) -update

golden-check: ## check that regenerating the golden files changes nothing and leaves no orphan
	@out=$$($(GO) test -count=1 -run '^TestGoldenOrphans$$' $(GOLDEN_PACKAGES) 2>&1) || { \
		echo "$$out"; \
		echo "golden-check: FAILED: see TestGoldenOrphans above (golden files that no test case produces: delete them, or run make golden)"; \
		exit 1; }
	$(GO) test -count=1 -run '^TestGolden' $(GOLDEN_PACKAGES) -update
	@changes=$$(git status --porcelain --untracked-files=all -- $(GOLDEN_DIRS)); \
	if [ -n "$$changes" ]; then \
		echo "golden-check: FAILED: regenerating the golden files changed the tree:"; \
		echo "$$changes" | sed 's/^/  /'; \
		echo "the tree now holds the regenerated files: review them with git diff -- $(GOLDEN_DIRS), commit them with the change that caused them, or restore them with git checkout -- $(GOLDEN_DIRS)"; \
		exit 1; \
	fi
	@echo "golden-check: the golden files match their tests, no orphan"

# The stock router's settings (environment variables, annotations, Route fields) that mapping/compat's
# table is held to, listed from checkouts of the router and the ingress operator (nothing is fetched).
.PHONY: stock-settings
stock-settings: ## list the stock router's settings into mapping/compat/testdata/stock-settings.txt (needs checkouts in STOCK_ROUTER_SRC and STOCK_OPERATOR_SRC)
	GO=$(GO) tools/stock-settings.sh

# The race lane: the packages with goroutines of their own, under the race detector (cgo and a C
# compiler needed; their tests start the real haproxy).
RACE_PACKAGES := ./inspect/access/ ./sync/controller/ ./sync/source/ ./sync/status/ ./runtime/haproxy/ ./runtime/supervise/ ./runtime/socket/ ./runtime/reload/

.PHONY: race
race: haproxy ## the packages with concurrency under the race detector
	@cc=$$($(GO) env CC); command -v "$${cc%% *}" >/dev/null 2>&1 || { echo "race: the race detector needs cgo and a C compiler ($$cc): apt-get install gcc"; exit 1; }
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PACKAGES)

# Fuzzing: Go's native fuzz targets, each run alone (go test -fuzz takes one package and one target).
# Their seed corpora (the test cases and examples, every recorded HAProxy reply, testdata/fuzz/<target>/
# of each package) run in every go test as plain tests; these targets mutate them. What a run finds new
# stays in Go's fuzz cache (under `go env GOCACHE`) and seeds the next run; a failing input is written to
# testdata/fuzz/<target>/ of its package, where go test replays it until it is fixed or removed.
# Minimization stops after FUZZMINIMIZE calls: Go's default (60 s) on every new input of the
# translation's multi-kilobyte manifests leaves hardly any time for fuzzing.
FUZZ_TARGETS := ./mapping/:FuzzTranslateRender \
	./runtime/socket/:FuzzCommandBuilders ./runtime/socket/:FuzzParseShowProc \
	./runtime/socket/:FuzzParseServersState ./runtime/socket/:FuzzParseMap \
	./runtime/socket/:FuzzParseCertPaths ./runtime/socket/:FuzzParseCertDetails \
	./runtime/socket/:FuzzParseCrtList ./runtime/socket/:FuzzParseInfo \
	./runtime/socket/:FuzzParseMapLookup ./runtime/socket/:FuzzParseReload \
	./runtime/apply/:FuzzApplyPlan ./inspect/metrics/:FuzzShowStat
FUZZTIME ?= 2m
FUZZ_SMOKE_TIME ?= 3s
FUZZMINIMIZE ?= 100x

# fuzz-loop runs every target of FUZZ_TARGETS for $(1) each (tools/fuzz-one.sh), all of them even when
# one fails, and sets status to 1 when one does.
fuzz-loop = for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t\#\#*:}; \
		echo "== $$name ($$pkg): $(1)"; \
		tools/fuzz-one.sh $(GO) $$pkg $$name $(1) $(FUZZMINIMIZE) || status=1; \
	done

.PHONY: fuzz fuzz-smoke
fuzz: haproxy ## long fuzzing runs: FUZZTIME per target (default 2m), then the translation again with haproxy -c on every input
	@status=0; $(call fuzz-loop,$(FUZZTIME)); \
	echo "== FuzzTranslateRender (./mapping/) with haproxy -c on every input: $(FUZZTIME)"; \
	HAROUTE_FUZZ_HAPROXY_CHECK=1 $(GO) test -run '^$$' -fuzz '^FuzzTranslateRender$$' -fuzztime $(FUZZTIME) \
		-fuzzminimizetime $(FUZZMINIMIZE) ./mapping/ || status=1; \
	exit $$status

fuzz-smoke: ## a short run of every fuzz target: FUZZ_SMOKE_TIME each (default 3s)
	@status=0; $(call fuzz-loop,$(FUZZ_SMOKE_TIME)); exit $$status

# golangci-lint is pinned in its own module, tools/lint (a tool directive in its go.mod), and built
# into bin/ only when the pin changes. .golangci.yml says what it checks, the architecture's import
# rules among them. e2e/tools is a module of its own: its package is linted from there, but not its
# cmd/ mains, two calls into upstream code whose type-checking takes minutes.
LINT_TOOLS := tools/lint
GOLANGCI_LINT := $(BIN)/golangci-lint

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint (pinned in tools/lint) over ./... with the e2e tag, and e2e/tools
	@status=0; \
	$(GOLANGCI_LINT) run ./... || status=1; \
	(cd $(E2E_TOOLS) && $(abspath $(GOLANGCI_LINT)) run -c $(abspath .golangci.yml) .) || status=1; \
	exit $$status

$(GOLANGCI_LINT): $(LINT_TOOLS)/go.mod $(LINT_TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(LINT_TOOLS) && $(GO) build -o $(abspath $@) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# govulncheck checks the project's module against the Go vulnerability database, offline: the
# database is the OSV files of golang.org/x/vulndb at the version tools/vuln pins, indexed by that
# module's cmd/indexdb into bin/vulndb, so no request goes to vuln.go.dev, only to the module proxy.
# govulncheck and indexdb are pinned in tools/vuln (tool directives in its go.mod) and rebuilt, and
# the database regenerated, only when the pins change. Refreshing the database is a bump of the pin:
# cd tools/vuln && go get golang.org/x/vulndb@latest && go mod tidy. The check fails (exit status 3)
# only on a vulnerability whose symbol the code calls; imported or required ones are listed but pass.
# e2e/tools is not scanned: it builds test binaries only, and govulncheck's analysis of it
# (kube-apiserver, etcd) takes 10 minutes and 20 GB of memory on 2 cores, against 20 seconds and 4 GB
# for ./... (measured with /usr/bin/time -v on `cd e2e/tools && govulncheck -db ... ./...`).
VULN_TOOLS := tools/vuln
GOVULNCHECK := $(BIN)/govulncheck
INDEXDB := $(BIN)/indexdb
VULNDB := $(BIN)/vulndb

.PHONY: vulncheck
vulncheck: $(GOVULNCHECK) $(VULNDB)/index/db.json ## govulncheck over ./... against the Go vulnerability database pinned in tools/vuln (offline)
	$(GOVULNCHECK) -db file://$(abspath $(VULNDB)) ./...

$(GOVULNCHECK): $(VULN_TOOLS)/go.mod $(VULN_TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(VULN_TOOLS) && $(GO) build -o $(abspath $@) golang.org/x/vuln/cmd/govulncheck

$(INDEXDB): $(VULN_TOOLS)/go.mod $(VULN_TOOLS)/go.sum
	@mkdir -p $(BIN)
	cd $(VULN_TOOLS) && $(GO) build -o $(abspath $@) golang.org/x/vulndb/cmd/indexdb

# The database is written next to its final place and moved there whole, so that an interrupted run
# leaves no partial database and an entry the new pin no longer has does not survive.
$(VULNDB)/index/db.json: $(INDEXDB) $(VULN_TOOLS)/go.sum
	@set -e; \
	dir=$$(cd $(VULN_TOOLS) && $(GO) mod download golang.org/x/vulndb && $(GO) list -m -f '{{.Dir}}' golang.org/x/vulndb); \
	[ -d "$$dir/data/osv" ] || { echo "vulncheck: no data/osv in golang.org/x/vulndb ($$dir)"; exit 1; }; \
	echo "vulncheck: indexing $$dir/data/osv into $(VULNDB)"; \
	rm -rf $(VULNDB).tmp; \
	$(INDEXDB) -vulns "$$dir/data/osv" -out $(VULNDB).tmp; \
	rm -rf $(VULNDB); \
	mv $(VULNDB).tmp $(VULNDB)

fmt: ## gofmt every Go file
	$(GO) fmt ./...

clean: ## remove build outputs
	rm -rf $(BIN) coverage*.out cover.out coverage.html
