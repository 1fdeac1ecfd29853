package engine

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// partialWorld is nodes of 8 H100s and ClusterQueue cq with gpus GPUs of nominal quota,
// LocalQueue ns/open pointing at it.
func partialWorld(t *testing.T, nodes int, gpus resources.Amount) (*api.Objects, *cluster.Snapshot) {
	t.Helper()
	objs := &api.Objects{
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h"}}},
		NodePools: []api.NodePool{{Meta: api.Meta{Name: "h"}, Count: nodes, GPUModel: "H100", GPUsPerNode: 8,
			CPU: 64000, Memory: 1 << 40}},
		ClusterQueues: []api.ClusterQueue{{Meta: api.Meta{Name: "cq"}, QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h", Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: gpus}}}}}}}},
		LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "open", Namespace: "ns"}, ClusterQueue: "cq"}},
	}
	ns, err := cluster.ExpandPool(objs.NodePools[0])
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cluster.NewSnapshot(ns, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs, snap
}

// Kueue's sample (a Job of 20 one-GPU pods with job-min-parallelism 9) and its
// neighbours: the full count when it fits, else the largest count the quota takes,
// placed whole; nothing below the minimum.
func TestPartialAdmissionInCycle(t *testing.T) {
	tests := []struct {
		name       string
		nodes      int
		quota      resources.Amount
		min        int32
		wantPods   int         // admitted and bound pods; 0: rejected
		wantReason plan.Reason // when rejected
	}{
		{name: "sample: 9 of 20 in a queue of 9 GPUs", nodes: 3, quota: 9, min: 9, wantPods: 9},
		{name: "largest count that fits: 16 of 20", nodes: 3, quota: 16, min: 9, wantPods: 16},
		{name: "full count when it fits", nodes: 3, quota: 24, min: 9, wantPods: 20},
		{name: "minimum above the quota: refused", nodes: 3, quota: 9, min: 12, wantReason: plan.ReasonExceedsMaxQuota},
		{name: "no minimum: refused as before", nodes: 3, quota: 9, wantReason: plan.ReasonExceedsMaxQuota},
		// Quota takes 16, the single node 8: placement refuses the reduced gang, which
		// is not reduced further (as in Kueue, partial admission follows quota only).
		{name: "reduced gang larger than the nodes", nodes: 1, quota: 16, min: 4, wantReason: plan.ReasonQuotaFitsClusterDoesNot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, snap := partialWorld(t, tc.nodes, tc.quota)
			s, quota := buildWithQuota(t, objs)
			w := gt.MakeWorkload("ns", "sample").Queue("open").Pods(20).MinCount(tc.min).GPUs(1).Obj()
			if err := s.Submit(w, gt.Epoch(), 0); err != nil {
				t.Fatal(err)
			}
			p := s.Cycle(World{Now: gt.Epoch(), Cluster: snap, Quota: quota})
			if err := p.Validate(); err != nil {
				t.Fatalf("plan invalid: %v", err)
			}
			if tc.wantPods == 0 {
				if len(p.Admissions) != 0 || len(p.Rejections) != 1 || p.Rejections[0].Reason != tc.wantReason {
					t.Fatalf("admissions %+v rejections %+v, want one rejection %s", p.Admissions, p.Rejections, tc.wantReason)
				}
				return
			}
			if len(p.Admissions) != 1 {
				t.Fatalf("admissions %+v rejections %+v, want one admission", p.Admissions, p.Rejections)
			}
			a := p.Admissions[0]
			if got := a.PodSets[0].Count; int(got) != tc.wantPods || len(p.Bindings) != tc.wantPods {
				t.Fatalf("admitted count %d with %d bindings, want %d of each", got, len(p.Bindings), tc.wantPods)
			}
			if got := a.PodSets[0].Usage[resources.NvidiaGPU]; got != resources.Amount(tc.wantPods) {
				t.Errorf("quota charged %d GPUs, want %d", got, tc.wantPods)
			}
			partial := tc.wantPods < 20
			if admitted, asked := a.Quota.PartialPods(); a.Quota.Partial() != partial || (partial && (int(admitted) != tc.wantPods || asked != 20)) {
				t.Errorf("partial %v (%d of %d), want %v", a.Quota.Partial(), admitted, asked, partial)
			}
			if got := a.Quota.PartialText(); partial != (got != "") {
				t.Errorf("PartialText %q for a partial admission %v", got, partial)
			}
		})
	}
}
