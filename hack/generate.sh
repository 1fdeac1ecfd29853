#!/usr/bin/env bash
# hack/generate.sh regenerates the deepcopy functions of pkg/apis/v1alpha1 and the CRDs
# in config/crd/bases with the controller-gen version pinned in hack/tools/go.mod.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CG=(go run -modfile=hack/tools/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen)
"${CG[@]}" object paths=./pkg/apis/...
"${CG[@]}" crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
