#!/usr/bin/env bash
# hack/generate.sh regenerates the deepcopy functions of pkg/apis/v1alpha1 and the CRDs
# in config/crd/bases with the controller-gen version pinned in hack/tools/go.mod.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
CG=(go run -modfile=hack/tools/go.mod sigs.k8s.io/controller-tools/cmd/controller-gen)
"${CG[@]}" object paths=./pkg/apis/...
"${CG[@]}" crd paths=./pkg/apis/... output:crd:artifacts:config=config/crd/bases
# Helm installs the CRDs from the chart's crds/ directory: keep a copy there.
rm -f charts/gantry/crds/*.yaml
for kind in resourceflavors clusterqueues localqueues cohorts workloadpriorityclasses topologies workloads; do
	cp "config/crd/bases/gantry.dev_${kind}.yaml" charts/gantry/crds/
done
