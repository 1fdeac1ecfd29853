package sim

import (
	"fmt"
	gt "github.com/gantry-sched/gantry/internal/testing"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// allH100 is NVIDIA's gpu DeviceClass and a claim template asking with allocationMode
// All for every H100 of a node.
const allH100 = gt.GPUDeviceClassYAML + "---\n" + `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: every-h100
  namespace: ns
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: All
          selectors:
          - cel:
              expression: device.attributes["gpu.nvidia.com"].productName.contains("H100")
`

// allJob is a one-pod Job whose pod takes every H100 of its node through every-h100.
func allJob(name, submit string) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: ns
  labels:
    kueue.x-k8s.io/queue-name: q
  annotations:
    gantry.dev/submit-at: %s
    gantry.dev/duration: 1h
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - name: gpus
        resourceClaimTemplateName: every-h100
      containers:
      - name: main
        image: x
        resources:
          requests:
            cpu: "1"
          claims:
          - name: gpus
`, name, submit)
}

// runAllMode simulates two such Jobs on two 8-H100 nodes and one 8-A100 node under a
// ClusterQueue of gpuQuota nvidia.com/gpu, and returns the log.
func runAllMode(t *testing.T, gpuQuota string) []EventRecord {
	t.Helper()
	in := strings.Join([]string{
		k8s.MakeNodePool("h100", 2).GPUs("H100-SXM5-80GB", 8).YAML(),
		k8s.MakeNodePool("a100", 1).GPUs("A100-SXM4-80GB", 8).YAML(),
		k8s.MakeFlavor("f").YAML(),
		k8s.MakeClusterQueue("cq").Quota("f", "cpu", "64", "nvidia.com/gpu", gpuQuota).YAML(),
		k8s.MakeLocalQueue("ns", "q", "cq").YAML(),
		allH100, allJob("first", "0s"), allJob("second", "1m"),
	}, "---\n")
	objs, err := manifest.LoadBytes("all.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range objs.Workloads {
		if got := w.PodSets[0].Requests["nvidia.com/gpu"]; got != 8 {
			t.Fatalf("%s is charged %d nvidia.com/gpu per pod, want 8 (the most H100s on one node)", w.ID(), got)
		}
	}
	s, err := New(objs, Options{KeepLog: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s.Log()
}

const everyGPU = "[GPU-0 GPU-1 GPU-2 GPU-3 GPU-4 GPU-5 GPU-6 GPU-7]"

// A pod asking with allocationMode All for the H100s of a node is admitted, charged
// the 8 GPUs of the largest H100 node, and placed on an H100 node taking all 8 of its
// GPUs (never on the A100 node). Under a quota of 16 both Jobs run at once on the two
// H100 nodes; under 12 the second waits for the first to finish, although an H100
// node is free: its quota charge, not the cluster, holds it.
func TestDRAAllocationModeAllTakesEveryMatchingGPU(t *testing.T) {
	placed := func(t *testing.T, log []EventRecord, wl string) EventRecord {
		t.Helper()
		p, ok := firstOf(log, wl, EvPlaced)
		if !ok {
			t.Fatalf("%s never placed", wl)
		}
		if len(p.Pods) != 1 || !strings.HasPrefix(p.Pods[0].Node, "h100-") || fmt.Sprint(p.Pods[0].Devices) != everyGPU {
			t.Fatalf("%s placed %s, want one pod on an h100 node with %s", wl, placedAt(p), everyGPU)
		}
		return p
	}
	t.Run("quota for both", func(t *testing.T) {
		log := runAllMode(t, "16")
		first, second := placed(t, log, "ns/first"), placed(t, log, "ns/second")
		if first.Pods[0].Node == second.Pods[0].Node {
			t.Errorf("both on %s", first.Pods[0].Node)
		}
		if first.T.Duration() != 0 || second.T.Duration().Minutes() != 1 {
			t.Errorf("placed at %v and %v, want each at its submission", first.T.Duration(), second.T.Duration())
		}
	})
	t.Run("quota for one", func(t *testing.T) {
		log := runAllMode(t, "12")
		placed(t, log, "ns/first")
		done, ok := firstOf(log, "ns/first", EvFinished)
		if !ok {
			t.Fatal("first never finishes")
		}
		if second := placed(t, log, "ns/second"); second.T != done.T {
			t.Errorf("second placed at %v, want when first finishes (%v): it is charged 8 of 12", second.T.Duration(), done.T.Duration())
		}
	})
}
