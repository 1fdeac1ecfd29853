package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// liveDump is what `kubectl get nodes,pods -A -o yaml` prints for two 8-GPU nodes with
// a DaemonSet pod each, a system pod holding 2 GPUs on n1, a queued pod running on 6
// GPUs of n0, a queued pod pending for 4 GPUs, a finished pod and an unbound pod
// without a queue; the queue objects beside it.
const liveDump = `apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 16}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: n0
    labels: {kubernetes.io/hostname: n0, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: "8"}
  status:
    allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata:
    name: n1
    labels: {kubernetes.io/hostname: n1, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3, nvidia.com/gpu.count: "8"}
  status:
    allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: agent-n0
    namespace: kube-system
    ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]
  spec:
    nodeName: n0
    containers: [{name: a, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: agent-n1
    namespace: kube-system
    ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, uid: u1, controller: true}]
  spec:
    nodeName: n1
    containers: [{name: a, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: dcgm-burn, namespace: kube-system}
  spec:
    nodeName: n1
    containers: [{name: b, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: train
    namespace: ml
    labels: {kueue.x-k8s.io/queue-name: q}
    annotations: {gantry.dev/duration: 2h}
  spec:
    nodeName: n0
    containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 6}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata:
    name: tune
    namespace: ml
    labels: {kueue.x-k8s.io/queue-name: q}
    annotations: {gantry.dev/duration: 1h}
  spec:
    containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
  status: {phase: Pending}
- apiVersion: v1
  kind: Pod
  metadata: {name: old-eval, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}}
  spec:
    nodeName: n1
    containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Pod
  metadata: {name: debug, namespace: default}
  spec:
    containers: [{name: d, image: x}]
  status: {phase: Pending}
`

func writeDump(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSimulateLiveDump: the running pod starts at 0s on n0 and ends at 2h, the pending
// one is placed where capacity is left (n1: 6 GPUs free beside the system pod's 2).
func TestSimulateLiveDump(t *testing.T) {
	in := writeDump(t, liveDump)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	_, errOut, code := runCLI(t, "simulate", "-f", in, "--events", events, "--seed", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Pod default/debug: skipped: " + "no queue label and not bound to a node",
		"cluster dump: 1 pods of 1 queued workloads run at t=0 where they are, 3 pods without a queue use capacity on their nodes, 1 finished pods skipped",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	log, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var placed, finished []string
	for _, line := range strings.Split(string(log), "\n") {
		switch {
		case strings.Contains(line, `"event":"placed"`):
			placed = append(placed, line)
		case strings.Contains(line, `"event":"finished"`):
			finished = append(finished, line)
		}
	}
	if len(placed) != 2 || !strings.Contains(placed[0], `"t":0,`) || !strings.Contains(placed[0], `"workload":"ml/train"`) || !strings.Contains(placed[0], `"node":"n0"`) {
		t.Fatalf("placed records:\n%s\nwant ml/train on n0 at 0 first", strings.Join(placed, "\n"))
	}
	if !strings.Contains(placed[1], `"workload":"ml/tune"`) || !strings.Contains(placed[1], `"node":"n1"`) || strings.Contains(placed[1], `"GPU-0"`) || strings.Contains(placed[1], `"GPU-1"`) {
		t.Fatalf("tune placed %s, want on n1 off the system pod's GPUs 0 and 1", placed[1])
	}
	if len(finished) != 2 || !strings.Contains(strings.Join(finished, "\n"), `"t":7200,"event":"finished","workload":"ml/train"`) {
		t.Fatalf("finished records:\n%s\nwant ml/train at 2h", strings.Join(finished, "\n"))
	}
}

func TestValidateLiveDump(t *testing.T) {
	out, errOut, code := runCLI(t, "validate", "-f", writeDump(t, liveDump))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "OK: 0 node pools, 2 nodes,") || !strings.Contains(out, "2 workloads") ||
		!strings.Contains(out, "cluster dump: 1 pods of 1 queued workloads run at t=0") {
		t.Fatalf("validate output:\n%s", out)
	}
}

func TestValidateLiveDumpErrors(t *testing.T) {
	for _, tc := range []struct{ name, edit, want string }{
		{"node not in the input", "nodeName: n1\n    containers: [{name: b,", `Pod kube-system/dcgm-burn: spec.nodeName: bound to node "n9", which is not in the input`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(liveDump, tc.edit, strings.Replace(tc.edit, "n1", "n9", 1), 1)
			_, errOut, code := runCLI(t, "validate", "-f", writeDump(t, bad))
			if code == 0 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant it to name %q", code, errOut, tc.want)
			}
		})
	}
}
