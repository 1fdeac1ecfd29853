#!/usr/bin/env bash
# hack/test-env.sh provides what the integration tests need, outside the work tree:
#   - a C compiler for cgo (go-nvml) and etcd (Debian's etcd-server package) on PATH;
#   - kube-apiserver, kube-controller-manager and kubectl built from the pinned
#     k8s.io/kubernetes release through the wrapper module in hack/kube, cached in
#     ${GANTRY_CACHE:-$HOME/.cache/gantry}/k8s/<version>/bin;
#   - a headless browser (Debian's chromium package) for the dashboard's browser test
#     (internal/dashboard), which looks for chromium or chromium-browser on PATH.
# It is idempotent and prints nothing when everything is already in place.
# internal/testing/kubeenv finds the binaries in the same directory.
set -euo pipefail

LOG_TAG=test-env
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_etcd() {
	if command -v etcd >/dev/null 2>&1; then return 0; fi
	log "installing etcd-server from apt"
	as_root apt-get update -qq >/dev/null
	# The package tries to start a system service; without systemd that fails harmlessly.
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq etcd-server >/dev/null 2>&1 || true
	if ! command -v etcd >/dev/null 2>&1; then
		log "etcd is still not on PATH after installing etcd-server"
		return 1
	fi
}

# go-nvml (the node agent's NVML) is cgo: the build needs a C compiler.
ensure_cc() {
	if command -v "${CC:-gcc}" >/dev/null 2>&1 || command -v cc >/dev/null 2>&1; then return 0; fi
	log "installing gcc from apt (go-nvml needs cgo)"
	as_root apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq gcc libc6-dev >/dev/null 2>&1 || true
	if ! command -v gcc >/dev/null 2>&1; then
		log "no C compiler after installing gcc"
		return 1
	fi
}

# The dashboard's browser test drives Debian's chromium headless through chromedp.
ensure_chromium() {
	if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then return 0; fi
	log "installing chromium from apt (the dashboard's browser test)"
	as_root apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null 2>&1 || true
	if ! command -v chromium >/dev/null 2>&1; then
		log "chromium is still not on PATH after installing the chromium package"
		return 1
	fi
}

build_kube() {
	if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ]; then return 0; fi
	lock_cache
	if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ]; then return 0; fi
	log "building kube-apiserver and kube-controller-manager $K8S_VERSION into $BIN (10-15 min cold)"
	build_wrapped kube-apiserver kube-controller-manager
}

# kubectl of the same release: the tests run `kubectl gantry ...` through kubectl's own
# plugin lookup. Built apart so that a cache made before it keeps its API server.
build_kubectl() {
	if [ -x "$BIN/kubectl" ]; then return 0; fi
	lock_cache
	if [ -x "$BIN/kubectl" ]; then return 0; fi
	log "building kubectl $K8S_VERSION into $BIN"
	LDPKG=k8s.io/client-go/pkg/version build_wrapped kubectl
}

ensure_cc
ensure_etcd
ensure_chromium
build_kube
build_kubectl
