package engine

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// benchWorld is 1,000 nodes of 8 H100s, one ClusterQueue with quota for all of them and
// 5,000 pending workloads of 1, 2, 4 or 8 GPUs (pods of up to 8 GPUs, gangs up to 4 pods).
func benchWorld(b *testing.B) (*cluster.Snapshot, *api.Objects, []Pending) {
	b.Helper()
	objs := &api.Objects{
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h100"}, NodeLabels: map[string]string{"pool": "h100"}}},
		NodePools: []api.NodePool{{Meta: api.Meta{Name: "h100"}, Count: 1000, GPUModel: "H100", GPUsPerNode: 8,
			CPU: 96000, Memory: 1 << 40, NodeLabels: map[string]string{"pool": "h100"}}},
		ClusterQueues: []api.ClusterQueue{{Meta: api.Meta{Name: "cq"}, QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h100", Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: 8000}}}}}}}},
	}
	nodes, err := cluster.ExpandPool(objs.NodePools[0])
	if err != nil {
		b.Fatal(err)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	pending := make([]Pending, 5000)
	for i := range pending {
		gpus := []int64{1, 2, 4, 8}[rng.Intn(4)]
		pods := int32(1)
		if gpus == 8 {
			pods = int32(1 + rng.Intn(4))
		}
		w := gt.MakeWorkload("ns", fmt.Sprintf("w%04d", i)).Created(time.Duration(i) * time.Second).
			Priority(int32(rng.Intn(3))).Pods(pods).GPUs(gpus).Obj()
		pending[i] = pending0(w)
	}
	return snap, objs, pending
}

func pending0(w *api.Workload) Pending {
	return Pending{Workload: w, ClusterQueue: "cq", Strategy: api.BestEffortFIFO, QueuedAt: w.Created}
}

// BenchmarkCycle1000Nodes5000Pending measures one full cycle over the real admission and
// placement layers (admits until the cluster is full, explains the rest).
func BenchmarkCycle1000Nodes5000Pending(b *testing.B) {
	snap, objs, pending := benchWorld(b)
	base, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		b.Fatal(err)
	}
	placer := NewPlacer(PlacerConfig{Flavors: objs.Flavors, Seed: 1})
	e, err := New(Config{}, placer)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := e.Cycle(Input{Cycle: 1, Now: gt.Epoch(), Cluster: snap, Quota: NewAdmissionQuota(base.Clone(), nil), Pending: pending})
		if len(p.Admissions) == 0 {
			b.Fatal("nothing admitted")
		}
		b.ReportMetric(float64(len(p.Admissions)), "admitted") // a benchmark metric, not accounting
	}
}
