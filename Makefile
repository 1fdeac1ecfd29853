# Gantry build and test entry points. `make test` is what CI runs (.ci/run).
GO      ?= go
PKGS    ?= ./...
BIN     ?= bin/gantry

.PHONY: all build test unit test-env lint bench bench-k8s bench-k8s-fleet bench-quality generate fuzz image clean

all: build

# bin/kubectl-gantry makes `kubectl gantry ...` work with bin/ on PATH (kubectl's plugin lookup).
build:
	$(GO) build -o $(BIN) ./cmd/gantry
	ln -sf $(notdir $(BIN)) $(dir $(BIN))kubectl-gantry

# Everything the tests need (etcd, a kube-apiserver built from k8s.io/kubernetes) is
# installed or built by hack/ scripts and cached outside the work tree.
test: test-env lint
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

# Side-by-side binding benchmark on the real API server (not part of `make test`): the
# raw create+bind rate, kube-scheduler of the same release, and Gantry (plain-pod gangs,
# Jobs through queues) on KWOK nodes; prints a markdown table (docs/benchmarks-k8s.md).
# hack/bench-env.sh builds kube-scheduler and kwok once; GANTRY_SCALE_NODES and
# GANTRY_SCALE_PODS size it (default 2,000 nodes, 10,000 pods).
bench-k8s: test-env
	@bash hack/bench-env.sh
	$(GO) test -count=1 -tags k8sscale -run '^TestBenchK8s$$' -timeout 60m -v ./pkg/controller

# Gantry alone at a fleet's size (not part of `make test`): 10,000 KWOK nodes, 100,000
# one-GPU pods in plain-pod gangs of 8, each pod ending 300 s after it runs
# (GANTRY_FLEET_NODES, GANTRY_FLEET_PODS, GANTRY_FLEET_RUN_SECONDS).
bench-k8s-fleet: test-env
	@bash hack/bench-env.sh
	$(GO) test -count=1 -tags k8sscale -run '^TestBenchK8sFleet$$' -timeout 80m -v ./pkg/controller

# Decision quality against the published record (not part of `make test`): the FGD paper's
# fragmentation table over the 17 openb variants and the Philly queueing and ETA tables,
# regenerated into docs/benchmarks.md from the traces in $(TRACES).
TRACES ?= ../shared/traces
bench-quality: build
	TRACES=$(TRACES) bash hack/bench-quality.sh

# Fuzz the manifest loader for a while (no input may panic); the seed corpus runs in `make test`.
# Then check the simulator's invariants over 1,000,000 random steps (`make test`: 100,000).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime 60s -fuzzminimizetime 1s ./pkg/manifest
	$(GO) test -count=1 -v -run '^TestInvariantsProperty$$' -timeout 30m ./pkg/sim -rapid.checks=1000 -invariants.steps=1000000

# Images of the controller and the node agent as OCI layouts in bin/images/, built by
# hack/image (go-containerregistry) with no container daemon. The controller is static
# (CGO_ENABLED=0) for every arch in IMAGE_ARCHES; the node agent needs cgo for NVML, so
# it is built for this machine's arch, with pure-Go DNS and user lookups (netgo,
# osusergo) so that NVML is its only use of C. SOURCE_DATE_EPOCH (the last commit's
# time) makes rebuilds bit-identical. Push with `crane push` or `skopeo copy oci:...`.
VERSION           ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.1.0-dev)
REVISION          ?= $(shell git rev-parse HEAD 2>/dev/null)
REGISTRY          ?= ghcr.io/gantry-sched
IMAGE_ARCHES      ?= amd64
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
HOST_ARCH         := $(shell $(GO) env GOARCH)
IMAGE_LDFLAGS     := -s -w -X github.com/gantry-sched/gantry/internal/cli.Version=$(VERSION)
IMAGE_LABELS       = -version '$(VERSION)' -revision '$(REVISION)'

image:
	@mkdir -p bin/images
	for arch in $(IMAGE_ARCHES); do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -ldflags '$(IMAGE_LDFLAGS)' \
	    -o bin/linux_$$arch/gantry ./cmd/gantry || exit 1; \
	done
	CGO_ENABLED=1 $(GO) build -trimpath -tags netgo,osusergo -ldflags '$(IMAGE_LDFLAGS)' \
	  -o bin/linux_$(HOST_ARCH)_cgo/gantry ./cmd/gantry
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./hack/image $(IMAGE_LABELS) \
	  -ref $(REGISTRY)/gantry:$(VERSION) -out bin/images/gantry \
	  $(foreach arch,$(IMAGE_ARCHES),-binary linux/$(arch)=bin/linux_$(arch)/gantry) \
	  $(if $(word 2,$(IMAGE_ARCHES)),,-docker-tar bin/images/gantry.tar) \
	  -entrypoint '/gantry controller' -user 65532:65532 -static
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./hack/image $(IMAGE_LABELS) \
	  -ref $(REGISTRY)/gantry-node-agent:$(VERSION) -out bin/images/gantry-node-agent \
	  -binary linux/$(HOST_ARCH)=bin/linux_$(HOST_ARCH)_cgo/gantry -docker-tar bin/images/gantry-node-agent.tar \
	  -entrypoint '/gantry node-agent' -dlopen libm.so.6,libdl.so.2,libpthread.so.0,librt.so.1

# Regenerate deepcopy functions and CRDs (controller-gen pinned in hack/tools).
generate:
	hack/generate.sh

clean:
	rm -rf bin
