package engine

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// schedWorld is one 8-GPU node, ClusterQueue cq with 8 GPUs, LocalQueues ns/open and
// ns/drained pointing at it.
func schedWorld(t *testing.T, drained api.StopPolicy) (*api.Objects, *cluster.Snapshot) {
	t.Helper()
	objs := &api.Objects{
		Flavors: []api.ResourceFlavor{{Meta: api.Meta{Name: "h"}}},
		NodePools: []api.NodePool{{Meta: api.Meta{Name: "h"}, Count: 1, GPUModel: "H100", GPUsPerNode: 8,
			CPU: 64000, Memory: 1 << 40}},
		ClusterQueues: []api.ClusterQueue{{Meta: api.Meta{Name: "cq"}, QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h", Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: 8}}}}}}}},
		LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "open", Namespace: "ns"}, ClusterQueue: "cq"},
			{Meta: api.Meta{Name: "drained", Namespace: "ns"}, ClusterQueue: "cq", StopPolicy: drained}},
	}
	nodes, err := cluster.ExpandPool(objs.NodePools[0])
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs, snap
}

// buildWithQuota wires the scheduler from objs, with the empty admitted-quota tree a
// driver starts from.
func buildWithQuota(t *testing.T, objs *api.Objects) (*Scheduler, *admission.Quota) {
	t.Helper()
	s, err := Build(objs, DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	quota, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, quota
}

func gpuJob(name, lq string, gpus int64) *api.Workload {
	return gt.MakeWorkload("ns", name).Queue(lq).GPUs(gpus).Obj()
}

// A running workload of a LocalQueue whose stop policy is HoldAndDrain is evicted by
// the next cycle; one of an open LocalQueue of the same ClusterQueue is not.
func TestSchedulerDrainsLocalQueue(t *testing.T) {
	objs, snap := schedWorld(t, api.StopHoldAndDrain)
	s, quota := buildWithQuota(t, objs)
	for _, w := range []*api.Workload{gpuJob("a", "open", 1), gpuJob("b", "drained", 1)} {
		if err := s.Submit(w, gt.Epoch(), time.Hour); err != nil {
			t.Fatal(err)
		}
		s.Started(w.ID(), gt.Epoch())
	}
	running := []placement.Running{{ID: "ns/a", Queue: "cq", StartedAt: gt.Epoch()}, {ID: "ns/b", Queue: "cq", StartedAt: gt.Epoch()}}
	p := s.Cycle(World{Now: gt.Epoch().Add(time.Minute), Cluster: snap, Quota: quota, Running: running})
	if len(p.Evictions) != 1 || p.Evictions[0].Workload != "ns/b" {
		t.Fatalf("evictions %+v, want only ns/b", p.Evictions)
	}
	if p.Evictions[0].Reason != "LocalQueue ns/drained has stop policy HoldAndDrain" {
		t.Errorf("reason %q", p.Evictions[0].Reason)
	}
}

// A workload held by its queue is parked until the queue objects change, and a
// submit of the same workload twice is an error.
func TestSchedulerParksHeldQueues(t *testing.T) {
	objs, snap := schedWorld(t, api.StopHold)
	s, quota := buildWithQuota(t, objs)
	w := gpuJob("held", "drained", 1)
	if err := s.Submit(w, gt.Epoch(), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(w, gt.Epoch(), 0); err == nil {
		t.Error("a second Submit of the same workload was accepted")
	}
	world := World{Now: gt.Epoch(), Cluster: snap, Quota: quota}
	p := s.Cycle(world)
	if len(p.Admissions) != 0 || len(p.Rejections) != 1 || p.Rejections[0].Reason != plan.ReasonQueueHeld {
		t.Fatalf("plan %+v, want one QueueHeld rejection", p)
	}
	s.Committed(p, nil)
	if got := s.Parked(w.ID()); got != ParkedQueue {
		t.Fatalf("parked %v, want ParkedQueue", got)
	}
	if p := s.Cycle(world); !p.IsEmpty() {
		t.Errorf("a parked workload was tried again without a change: %+v", p)
	}
	if _, considered := s.Stats(); considered != 0 {
		t.Errorf("%d pending handed to the engine, want 0 (the queue layer answered)", considered)
	}
}

// A ClusterQueue whose stop policy is HoldAndDrain admits nothing (a newcomer is held)
// and the next cycle evicts what it runs.
func TestSchedulerDrainsClusterQueue(t *testing.T) {
	objs, snap := schedWorld(t, "")
	objs.ClusterQueues[0].StopPolicy = api.StopHoldAndDrain
	s, quota := buildWithQuota(t, objs)
	running := gpuJob("running", "open", 1)
	if err := s.Submit(running, gt.Epoch(), time.Hour); err != nil {
		t.Fatal(err)
	}
	s.Started(running.ID(), gt.Epoch())
	if err := s.Submit(gpuJob("new", "open", 1), gt.Epoch(), time.Hour); err != nil {
		t.Fatal(err)
	}
	p := s.Cycle(World{Now: gt.Epoch().Add(time.Minute), Cluster: snap, Quota: quota,
		Running: []placement.Running{{ID: "ns/running", Queue: "cq", StartedAt: gt.Epoch()}}})
	if len(p.Evictions) != 1 || p.Evictions[0].Workload != "ns/running" || p.Evictions[0].Reason != "ClusterQueue cq has stop policy HoldAndDrain" {
		t.Fatalf("evictions %+v, want ns/running for the ClusterQueue's stop policy", p.Evictions)
	}
	if len(p.Admissions) != 0 || len(p.Rejections) != 1 || p.Rejections[0].Workload != "ns/new" || p.Rejections[0].Reason != plan.ReasonQueueHeld {
		t.Fatalf("admissions %+v, rejections %+v; want ns/new held", p.Admissions, p.Rejections)
	}
}

// A recycled plan's rejection list is the next cycle's (no new one is grown), and the
// next cycle decides as it would have with a fresh list.
func TestSchedulerRecycleReusesRejections(t *testing.T) {
	objs, snap := schedWorld(t, "")
	s, quota := buildWithQuota(t, objs)
	for i := range 6 { // 4 GPUs each on one 8-GPU node: two fit, four are rejected
		if err := s.Submit(gpuJob(fmt.Sprintf("w%d", i), "open", 4), gt.Epoch(), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	world := World{Now: gt.Epoch(), Cluster: snap, Quota: quota}
	first := s.Cycle(world)
	if len(first.Rejections) == 0 {
		t.Fatalf("plan %+v: no rejections to recycle", first)
	}
	want := slices.Clone(first.Rejections)
	buf := &first.Rejections[:1][0]
	s.Recycle(&first)
	if first.Rejections != nil {
		t.Fatalf("recycled plan keeps %d rejections", len(first.Rejections))
	}
	again := s.Cycle(world) // nothing committed: the same decisions
	if len(again.Rejections) == 0 || &again.Rejections[:1][0] != buf {
		t.Fatalf("the next cycle did not reuse the recycled list")
	}
	if !reflect.DeepEqual(again.Rejections, want) {
		t.Fatalf("rejections after recycling %+v, want %+v", again.Rejections, want)
	}
}
