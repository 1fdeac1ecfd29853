# Gantry build and test entry points. `make test` is what CI runs (.ci/run).
GO      ?= go
PKGS    ?= ./...
BIN     ?= bin/gantry

.PHONY: all build test unit test-env lint bench bench-k8s generate fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gantry

# Everything the tests need (etcd, a kube-apiserver built from k8s.io/kubernetes) is
# installed or built by hack/ scripts and cached outside the work tree.
test: lint test-env
	$(GO) test -count=1 -timeout 20m $(PKGS)

# Unit tests only: no control plane.
unit:
	$(GO) test -count=1 -short $(PKGS)

test-env:
	@bash hack/test-env.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x -timeout 60m $(PKGS)

# Scale test against the real API server (not part of `make test`): 1,000 nodes and
# 5,000 pods in gangs of 8; prints pods bound per second and Job-to-bound latency.
bench-k8s: test-env
	$(GO) test -count=1 -tags k8sscale -run '^TestScaleBinding$$' -timeout 30m -v ./pkg/controller

# Fuzz the manifest loader for a while (no input may panic); the seed corpus runs in `make test`.
# Then check the simulator's invariants over 1,000,000 random steps (`make test`: 100,000).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 60s -fuzzminimizetime 1s ./pkg/manifest
	$(GO) test -count=1 -v -run '^TestInvariantsProperty$$' -timeout 30m ./pkg/sim -rapid.checks=1000 -invariants.steps=1000000

# Regenerate deepcopy functions and CRDs (controller-gen pinned in hack/tools).
generate:
	hack/generate.sh

clean:
	rm -rf bin
