#!/usr/bin/env bash
# hack/bench-env.sh provides what `make bench-k8s` needs on top of hack/test-env.sh,
# cached next to the test-env binaries in ${GANTRY_CACHE:-$HOME/.cache/gantry}/k8s/<version>/bin:
#   - kube-scheduler of the same k8s.io/kubernetes release as the API server, built
#     through the wrapper module in hack/kube (the benchmark's baseline);
#   - kwok (fake kubelets: Nodes go Ready and bound pods go Running), pinned to
#     $KWOK_VERSION and built with `go install`, which pins it cleanly because the
#     kwok module has no replace directives.
# It is not part of `make test`. Cold, each build takes 25-30 minutes on a loaded 2-core
# machine; it is idempotent and prints nothing when both are in place.
set -euo pipefail

LOG_TAG=bench-env
# shellcheck source=hack/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KWOK_VERSION=v0.8.0

build_scheduler() {
	if [ -x "$BIN/kube-scheduler" ]; then return 0; fi
	lock_cache
	if [ -x "$BIN/kube-scheduler" ]; then return 0; fi
	log "building kube-scheduler $K8S_VERSION into $BIN (25-30 min cold)"
	build_wrapped kube-scheduler
}

build_kwok() {
	if [ -x "$BIN/kwok" ] && [ "$(cat "$BIN/kwok.version" 2>/dev/null)" = "$KWOK_VERSION" ]; then return 0; fi
	lock_cache
	if [ -x "$BIN/kwok" ] && [ "$(cat "$BIN/kwok.version" 2>/dev/null)" = "$KWOK_VERSION" ]; then return 0; fi
	log "building kwok $KWOK_VERSION into $BIN (3-25 min cold)"
	local start tmp
	start=$(date +%s)
	tmp=$(mktemp -d "$CACHE/k8s/$K8S_VERSION/build.XXXXXX")
	(cd "$tmp" && GOWORK=off GOBIN="$tmp" GOFLAGS="-trimpath -buildvcs=false" \
		go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION")
	mkdir -p "$BIN"
	mv "$tmp/kwok" "$BIN/"
	echo "$KWOK_VERSION" >"$BIN/kwok.version"
	rmdir "$tmp"
	log "built in $(($(date +%s) - start))s"
}

build_scheduler
build_kwok
