# syntax=docker/dockerfile:1
# Gantry's two images, for machines with a container daemon. `make image` builds the
# same images without one (OCI layouts in bin/images/).
#
#   docker build --target controller -t ghcr.io/gantry-sched/gantry:dev .
#   docker build --target node-agent -t ghcr.io/gantry-sched/gantry-node-agent:dev .
#
# Builders are Debian 12 (bookworm), as the distroless runtime images are: a cgo binary
# linked against a newer glibc than the runtime's would not start.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS modules
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download

# The controller is pure Go (CGO_ENABLED=0): cross-compiled on the build platform.
FROM modules AS build-controller
ARG TARGETOS TARGETARCH VERSION=v0.1.0-dev
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/gantry-sched/gantry/internal/cli.Version=${VERSION}" \
      -o /out/gantry ./cmd/gantry

# The node agent needs cgo for NVML (go-nvml dlopens libnvidia-ml.so.1), so it builds
# on the target platform (emulated by buildx when that differs). netgo and osusergo keep
# DNS and user lookups in Go: glibc is then needed only for NVML.
FROM golang:${GO_VERSION}-bookworm AS build-node-agent
ARG VERSION=v0.1.0-dev
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=1 go build -trimpath -tags netgo,osusergo \
      -ldflags "-s -w -X github.com/gantry-sched/gantry/internal/cli.Version=${VERSION}" \
      -o /out/gantry ./cmd/gantry

# glibc (with the libm, libdl, libpthread and librt that libnvidia-ml.so.1 needs); the
# driver library itself is mounted from the host by NVIDIA's container toolkit.
FROM gcr.io/distroless/base-debian12 AS node-agent
ARG VERSION=v0.1.0-dev REVISION=""
LABEL org.opencontainers.image.source="https://github.com/gantry-sched/gantry" \
      org.opencontainers.image.version="${VERSION}" org.opencontainers.image.revision="${REVISION}"
COPY --from=build-node-agent /out/gantry /gantry
# Root: NVML's device nodes and the kubelet's root-owned device-plugin directory (the
# DaemonSet grants privilege only for MIG re-layout).
USER 0:0
ENTRYPOINT ["/gantry", "node-agent"]

# Last, so a plain `docker build .` gives the controller.
FROM gcr.io/distroless/static-debian12:nonroot AS controller
ARG VERSION=v0.1.0-dev REVISION=""
LABEL org.opencontainers.image.source="https://github.com/gantry-sched/gantry" \
      org.opencontainers.image.version="${VERSION}" org.opencontainers.image.revision="${REVISION}"
COPY --from=build-controller /out/gantry /gantry
USER 65532:65532
ENTRYPOINT ["/gantry", "controller"]
