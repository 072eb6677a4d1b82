# haroute's build entry points. `make` alone lists the targets.

SHELL := /bin/bash
.DEFAULT_GOAL := help

GO ?= go
BIN := bin
# Debian keeps haproxy in /usr/sbin, which is not on every user's PATH.
export PATH := $(PATH):/usr/sbin:/sbin

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

.PHONY: help build haproxy haproxy-versions iproute2 demo test unit render-example fmt clean e2e-bin

help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

build: ## build bin/haroute (version from git describe, or "dev")
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/haroute ./cmd/haroute

haproxy: ## install Debian's haproxy package when haproxy is missing
	@command -v haproxy >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y haproxy; }
	@haproxy -v | head -n 1

haproxy-versions: ## put HAProxy 3.0 (trixie), 3.2 (sid), 3.4 (experimental) from Debian's packages at bin/haproxy-<series> (kept while they run)
	bash $(E2E_TOOLS)/haproxy-versions.sh $(BIN) $(HAPROXY_SERIES)

iproute2: ## install Debian's iproute2 (ip netns, for the e2e pod networks) when ip is missing
	@command -v ip >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y iproute2; }

demo: build haproxy ## run haroute demo: HAProxy on 127.0.0.1:8080/8443 with example Routes and local backends (DEMO_ARGS to change)
	$(BIN)/haroute demo $(DEMO_ARGS)

test: unit e2e matrix ## the whole suite: unit and integration tests and e2e on 2.6, then the HAProxy matrix (as root)

unit: haproxy ## go vet and the tests of ./... (unit, and integration with the real haproxy)
	$(GO) vet ./...
	$(GO) vet -tags e2e ./e2e/framework/... ./e2e/cluster/...
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

render-example: build haproxy ## render examples/ into bin/example-haproxy and check it with haproxy -c
	ROUTER_ALLOW_WILDCARD_ROUTES=true $(BIN)/haroute render --manifests examples --haproxy-dir $(EXAMPLE_DIR)
	haproxy -c -f $(EXAMPLE_DIR)/conf/haproxy.cfg

.PHONY: e2e
e2e: build haproxy iproute2 e2e-bin ## end-to-end scenarios against a real kube-apiserver (as root: network namespaces)
	$(GO) test -tags e2e -count=1 -timeout $(TEST_TIMEOUT) ./e2e/framework/... ./e2e/cluster/...

e2e-bin: $(E2E_BINS) ## build bin/kube-apiserver and bin/etcd from e2e/tools (kept until e2e/tools changes)

# A binary is rebuilt only when it is missing or older than the module's pins or its main.go.
$(E2E_BINS): $(BIN)/%: $(E2E_TOOLS)/go.mod $(E2E_TOOLS)/go.sum $(E2E_TOOLS)/cmd/%/main.go
	@mkdir -p $(BIN)
	cd $(E2E_TOOLS) && CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o $(abspath $@) ./cmd/$*

# The HAProxy version matrix: bookworm's 2.6 runs everything above; each newer series runs the
# integration tests and a shorter oracle walk, and 3.2 (OpenShift's default, the official image) the
# cluster scenarios too.
MATRIX_PACKAGES := ./runtime/... ./mapping/render/ ./mapping/plan/ ./sync/controller/ ./e2e/traffic/ ./e2e/run/
MATRIX_ORACLE_STEPS ?= 100
MATRIX_E2E_SERIES := 3.2

.PHONY: matrix
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

fmt: ## gofmt every Go file
	$(GO) fmt ./...

clean: ## remove build outputs
	rm -rf $(BIN) coverage*.out cover.out coverage.html
