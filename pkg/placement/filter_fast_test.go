package placement

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The non-GPU check has a map-free fast path for pods that ask only cpu, memory and pod
// slots; it must reject exactly what the full check rejects, and report the same reason.
func TestNonGPUCheckFastPath(t *testing.T) {
	node := func(alloc resources.Vector) cluster.Node {
		n := gt.MakeNode("n").Obj()
		n.Allocatable = alloc
		return n
	}
	tests := []struct {
		name string
		node cluster.Node
		bind int // pods of 1 cpu bound on the node first
		req  resources.Vector
		// wantFast: the request takes the fast path; wantReject: the resource the check
		// names ("" = fits).
		wantFast   bool
		wantReject resources.Name
	}{
		{name: "fits", node: node(gt.Req("cpu", "4", "memory", "8Gi", "pods", "2")), req: gt.Req("cpu", "2", "memory", "1Gi"), wantFast: true},
		{name: "cpu short", node: node(gt.Req("cpu", "4", "memory", "8Gi", "pods", "8")), bind: 3, req: gt.Req("cpu", "2"), wantFast: true, wantReject: resources.CPU},
		{name: "memory short", node: node(gt.Req("cpu", "4", "memory", "1Gi")), req: gt.Req("memory", "2Gi"), wantFast: true, wantReject: resources.Memory},
		{name: "pod slots used up", node: node(gt.Req("cpu", "4", "memory", "8Gi", "pods", "1")), bind: 1, req: gt.Req("cpu", "1"), wantFast: true, wantReject: resources.Pods},
		{name: "no pods limit", node: node(gt.Req("cpu", "8", "memory", "8Gi")), bind: 3, req: gt.Req("cpu", "1"), wantFast: true},
		{name: "other resource", node: node(gt.Req("cpu", "4", "memory", "8Gi", "ephemeral-storage", "1Gi")), req: gt.Req("ephemeral-storage", "2Gi"), wantReject: "ephemeral-storage"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := cluster.NewSnapshot([]cluster.Node{tc.node}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ov := s.Overlay()
			for k := 0; k < tc.bind; k++ {
				if err := ov.AssumeAt(cluster.PodRef{Workload: "ns/b", PodSet: "p", Index: k}, 0, gt.Req("cpu", "1"), devices.Assignment{}); err != nil {
					t.Fatal(err)
				}
			}
			p, err := NewSimplePodRequest(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.cpuMemOnly != tc.wantFast {
				t.Fatalf("fast path = %v, want %v", p.cpuMemOnly, tc.wantFast)
			}
			for _, all := range []bool{false, true} {
				rej := nonGPUCheck(ov, 0, p, all, nil)
				got := resources.Name("")
				if len(rej) > 0 {
					got = rej[0].Resource
				}
				if got != tc.wantReject || len(rej) > 1 {
					t.Fatalf("all=%v: rejections %v, want one naming %q", all, rej, tc.wantReject)
				}
			}
		})
	}
}
