package sim

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/manifest"
)

// tasCluster is two racks under Kueue's TAS: rack small-0 of one 8-GPU node and rack
// big-0 of three, one ClusterQueue with room for all 32 GPUs.
const tasCluster = `apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata: {name: small}
spec:
  count: 1
  gpu: {model: NVIDIA-H100-80GB-HBM3, perNode: 8}
  cpu: "64"
  memory: 512Gi
  topology: [{key: topology.gantry.dev/rack, nodesPerDomain: 1, prefix: small-}]
---
apiVersion: gantry.dev/v1alpha1
kind: NodePool
metadata: {name: big}
spec:
  count: 3
  gpu: {model: NVIDIA-H100-80GB-HBM3, perNode: 8}
  cpu: "64"
  memory: 512Gi
  topology: [{key: topology.gantry.dev/rack, nodesPerDomain: 3, prefix: big-}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: dc}
spec:
  levels: [{nodeLabel: topology.gantry.dev/rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {topologyName: dc}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 32}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q, namespace: ml}
spec: {clusterQueue: cq}
`

// runTAS simulates the cluster with one more document and returns the pods' nodes of
// workload wl when it is placed ("" when it never is).
func runTAS(t *testing.T, doc, wl string) string {
	t.Helper()
	objs, err := manifest.LoadBytes("tas.yaml", []byte(tasCluster+"---\n"+doc))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(objs, Options{KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	r, ok := firstOf(s.Log(), wl, EvPlaced)
	if !ok {
		return ""
	}
	var nodes []string
	for _, p := range r.Pods {
		nodes = append(nodes, p.Node)
	}
	return strings.Join(nodes, ",")
}

// Kueue's podset-group-name in the simulator: a leader and its two workers asked for one
// rack land together in the rack of three nodes, though the leader alone would best-fit
// the rack of one.
func TestTopoPodSetGroupScenario(t *testing.T) {
	js := `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: serve, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {gantry.dev/duration: 1h}}
spec:
  replicatedJobs:
  - name: leader
    template: {spec: {template: {metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: topology.gantry.dev/rack, kueue.x-k8s.io/podset-group-name: g}},
      spec: {containers: [{name: l, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}}}}
  - name: workers
    template:
      spec:
        parallelism: 2
        template:
          metadata: {annotations: {kueue.x-k8s.io/podset-required-topology: topology.gantry.dev/rack, kueue.x-k8s.io/podset-group-name: g}}
          spec: {containers: [{name: w, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}
`
	got := runTAS(t, js, "ml/serve")
	if got == "" || strings.Count(got, "big-") != 3 {
		t.Fatalf("serve placed on %q, want all 3 pods on the big pool's rack", got)
	}
}

// Kueue's podset-unconstrained-topology in the simulator: 4 whole-node pods span both
// racks, where a required rack never fits them.
func TestTopoUnconstrainedScenario(t *testing.T) {
	job := func(annotation string) string {
		return `apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml, labels: {kueue.x-k8s.io/queue-name: q}, annotations: {gantry.dev/duration: 1h}}
spec:
  parallelism: 4
  completions: 4
  template:
    metadata: {annotations: {` + annotation + `}}
    spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]}
`
	}
	got := runTAS(t, job(`kueue.x-k8s.io/podset-unconstrained-topology: "true"`), "ml/train")
	if strings.Count(got, "small-") != 1 || strings.Count(got, "big-") != 3 {
		t.Fatalf("unconstrained train placed on %q, want both racks", got)
	}
	if got := runTAS(t, job(`kueue.x-k8s.io/podset-required-topology: topology.gantry.dev/rack`), "ml/train"); got != "" {
		t.Fatalf("required-rack train placed on %q, want never placed", got)
	}
}
