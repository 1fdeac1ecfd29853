package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	itesting "github.com/gantry-sched/gantry/internal/testing"
)

// draSelectorCluster is two H100 nodes and one A100 node, NVIDIA's gpu class, and a
// 2-pod gang whose claim template selects A100s only: one pod fits the A100 node, and
// the selector rules out both H100 nodes for the second.
const draSelectorCluster = `apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata:
  name: h100
spec:
  count: 2
  gpu:
    model: H100-SXM5-80GB
    perNode: 8
  cpu: "64"
  memory: 512Gi
---
apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata:
  name: a100
spec:
  count: 1
  gpu:
    model: A100-SXM4-80GB
    perNode: 8
  cpu: "64"
  memory: 512Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: f
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - name: cpu
        nominalQuota: "1000"
      - name: nvidia.com/gpu
        nominalQuota: "64"
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: q
  namespace: ns
spec:
  clusterQueue: cq
---
` + itesting.GPUDeviceClassYAML + "---\n" + `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: a100s
  namespace: ns
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 8
          selectors:
          - cel:
              expression: device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ns
  labels:
    kueue.x-k8s.io/queue-name: q
  annotations:
    gantry.dev/duration: 10m
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: a100s
      containers:
      - name: main
        image: x
        resources:
          requests:
            cpu: "1"
          claims:
          - name: gpu
`

// draB200Job asks for a GPU model the cluster does not have.
const draB200Job = `---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: b200
  namespace: ns
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel:
              expression: device.attributes["gpu.nvidia.com"].productName == "NVIDIA B200"
---
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: ns
  labels:
    kueue.x-k8s.io/queue-name: q
spec:
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: b200
  containers:
  - name: main
    image: x
    resources:
      claims:
      - name: gpu
`

// explain names the claim, the request and the selector that rule nodes out.
func TestExplainNamesTheSelectorThatRulesNodesOut(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "all.yaml"), []byte(draSelectorCluster+draB200Job), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ workload, want string }{
		{"ns/train", "0 of 3 nodes fit: 2 claim gpu request gpus: no matching free device, 1 claim gpu: too few matching free devices"},
		{"ns/notebook", `Devices claim gpu/gpus NoMatchingDevice: spec.devices.requests[0].exactly.selectors[0].cel.expression: ` +
			`"device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA B200\"" rules out all 8 free gpu devices`},
	}
	for _, c := range cases {
		out := mustRun(t, newExplainCommand(), c.workload, "-f", dir, "--at", "1m")
		if !strings.Contains(out, c.want) {
			t.Errorf("explain %s lacks %q:\n%s", c.workload, c.want, out)
		}
	}
}
