#!/usr/bin/env bash
# hack/lib.sh holds what hack/test-env.sh and hack/bench-env.sh share: the pinned
# Kubernetes release, the cache directory the binaries live in (internal/testing/kubeenv
# looks there too), and small helpers. Source it; it runs nothing by itself.

K8S_VERSION=v1.34.2
K8S_MAJOR=1
K8S_MINOR=34
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${GANTRY_CACHE:-$HOME/.cache/gantry}
BIN=$CACHE/k8s/$K8S_VERSION/bin

# LOG_TAG names the calling script in its messages.
log() { echo "${LOG_TAG:-hack}: $*" >&2; }

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
		log "need root to run: $*"; return 1; fi
}

# lock_cache takes the cache's build lock on fd 9: one builder at a time, since
# `make test` may start while a background build runs. It is released on exit.
lock_cache() {
	mkdir -p "$CACHE/k8s/$K8S_VERSION"
	exec 9>"$CACHE/k8s/$K8S_VERSION/.lock"
	if command -v flock >/dev/null; then flock 9; fi
}

# version_ldflags PKG prints the -ldflags that stamp the pinned release into PKG's
# version variables; without them the binaries report v0.0.0-master.
version_ldflags() {
	local pkg=$1
	echo "-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=$K8S_MAJOR -X $pkg.gitMinor=$K8S_MINOR -X $pkg.gitTreeState=clean"
}

# build_wrapped OUT... builds ./cmd/OUT of the wrapper module hack/kube into $BIN,
# with the version stamped through component-base (kubectl's LDPKG overrides it).
build_wrapped() {
	local start tmp pkg=${LDPKG:-k8s.io/component-base/version} cmds=() name
	start=$(date +%s)
	tmp=$(mktemp -d "$CACHE/k8s/$K8S_VERSION/build.XXXXXX")
	for name in "$@"; do cmds+=("./cmd/$name"); done
	(cd "$ROOT/hack/kube" && GOWORK=off GOFLAGS="-mod=readonly -buildvcs=false" go build -trimpath \
		-ldflags "$(version_ldflags "$pkg")" -o "$tmp/" "${cmds[@]}")
	mkdir -p "$BIN"
	for name in "$@"; do mv "$tmp/$name" "$BIN/"; done
	rmdir "$tmp"
	log "built in $(($(date +%s) - start))s"
}
