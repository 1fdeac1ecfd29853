package engine

import (
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

// restoreWorld is two nodes: big-0 (4 H100, pool=big) and small-0 (8 H100,
// pool=small), ClusterQueue cq with plenty of GPU quota and LocalQueue ns/lq.
func restoreWorld(t *testing.T) (*api.Objects, *cluster.Snapshot) {
	t.Helper()
	pool := func(name string, gpus int) api.NodePool {
		return api.NodePool{Meta: api.Meta{Name: name}, Count: 1, GPUModel: "H100", GPUsPerNode: gpus,
			CPU: 64000, Memory: 1 << 40, NodeLabels: map[string]string{"pool": name}}
	}
	objs := &api.Objects{
		Flavors:   []api.ResourceFlavor{{Meta: api.Meta{Name: "h"}}},
		NodePools: []api.NodePool{pool("big", 4), pool("small", 8)},
		ClusterQueues: []api.ClusterQueue{{Meta: api.Meta{Name: "cq"}, QueueingStrategy: api.BestEffortFIFO,
			ResourceGroups: []api.ResourceGroup{{CoveredResources: []resources.Name{resources.NvidiaGPU},
				Flavors: []api.FlavorQuotas{{Name: "h", Resources: []api.ResourceQuota{{Name: resources.NvidiaGPU, Nominal: 100}}}}}}}},
		LocalQueues: []api.LocalQueue{{Meta: api.Meta{Name: "lq", Namespace: "ns"}, ClusterQueue: "cq"}},
	}
	var nodes []cluster.Node
	for _, p := range objs.NodePools {
		ns, err := cluster.ExpandPool(p)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, ns...)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return objs, snap
}

// bind puts one pod of w (pod set main) on node with the given GPUs.
func bind(t *testing.T, snap *cluster.Snapshot, w api.WorkloadID, node string, idx ...int) *cluster.Snapshot {
	t.Helper()
	next, err := snap.Apply([]cluster.Change{{Op: cluster.OpBind, Pod: cluster.BoundPod{
		Ref: cluster.PodRef{Workload: w, PodSet: "main"}, Node: node, Devices: gpus(idx...)}}})
	if err != nil {
		t.Fatal(err)
	}
	return next
}

// splitGang is a gang whose pod set "a" (2 GPUs) goes anywhere and whose pod set "b"
// (4 GPUs) needs pool=big. Placement places "a" first and, binpacking, prefers the
// fuller node: once big-0 is free "a" takes it and "b" finds no room, although "a" on
// small-0 and "b" on big-0 fit. A fresh reservation walk therefore finds nothing,
// while a reservation planned earlier (when small-0 was fuller) stays valid. The
// scenario needs bin-packing, so its cycles rank nodes with the binpack scorer.
func splitGang() *api.Workload {
	return gt.MakeWorkload("ns", "gang").PodSet("a", 1).GPUs(2).PodSet("b", 1).GPUs(4).NodeSelector("pool", "big").Obj()
}

// A restored reservation is offered to the next cycle as the previous one: still valid,
// it keeps its ETA where a fresh walk finds none.
func TestRestoreReservationKeepsETA(t *testing.T) {
	objs, snap := restoreWorld(t)
	snap = bind(t, snap, "ns/x", "big-0", 0, 1, 2, 3)
	eta := gt.Epoch().Add(10 * time.Minute)
	running := []placement.Running{{ID: "ns/x", Queue: "cq", StartedAt: gt.Epoch(), ExpectedEnd: eta, GPUMilli: 4000, Preemptible: true,
		Pods: []cluster.PodRef{{Workload: "ns/x", PodSet: "main"}}}}
	prev := plan.Reservation{Nodes: []string{"big-0", "small-0"}, ETA: eta, Pods: []cluster.BoundPod{
		{Ref: cluster.PodRef{Workload: "ns/gang", PodSet: "a"}, Node: "small-0", Requests: resources.Vector{resources.NvidiaGPU: 2}, Devices: gpus(0, 1)},
		{Ref: cluster.PodRef{Workload: "ns/gang", PodSet: "b"}, Node: "big-0", Requests: resources.Vector{resources.NvidiaGPU: 4}, Devices: gpus(0, 1, 2, 3)},
	}}
	cycle := func(restore bool) plan.Plan {
		pol := DefaultPolicy()
		pol.Preemption = false
		pol.Placement = api.PlacementPolicy{Scorers: []api.WeightedScorer{{Name: placement.ScoreBinpack, Weight: 1}}}
		s, err := Build(objs, pol)
		if err != nil {
			t.Fatal(err)
		}
		quota, err := admission.NewQuota(objs, admission.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Submit(splitGang(), gt.Epoch(), time.Hour); err != nil {
			t.Fatal(err)
		}
		if restore {
			s.RestoreReservation("ns/gang", prev)
			if got, ok := s.Reservation("ns/gang"); !ok || !got.ETA.Equal(eta) || got.Workload != "ns/gang" {
				t.Fatalf("restored reservation %+v %v, want ETA %s for ns/gang", got, ok, eta)
			}
		}
		return s.Cycle(World{Now: gt.Epoch().Add(time.Minute), Cluster: snap, Quota: quota, Running: running})
	}
	fresh := cycle(false)
	if len(fresh.Reservations) != 0 || len(fresh.Rejections) != 1 {
		t.Fatalf("without the restored reservation: %+v; want a rejection (no fresh ETA), or the scenario tests nothing", fresh)
	}
	kept := cycle(true)
	if len(kept.Reservations) != 1 || !kept.Reservations[0].ETA.Equal(eta) {
		t.Fatalf("with the restored reservation: reservations %+v rejections %+v; want it kept at %s", kept.Reservations, kept.Rejections, eta)
	}
}

// runningOne is a scheduler over restoreWorld with one workload, ns/<name>, running.
func runningOne(t *testing.T, name string) (*Scheduler, *api.Workload) {
	t.Helper()
	objs, _ := restoreWorld(t)
	s, err := Build(objs, DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	w := gpuJob(name, "lq", 1)
	if err := s.Submit(w, gt.Epoch(), 0); err != nil {
		t.Fatal(err)
	}
	s.Started(w.ID(), gt.Epoch())
	return s, w
}

// RestoreReservation ignores workloads that are unknown or not pending.
func TestRestoreReservationOnlyPending(t *testing.T) {
	s, w := runningOne(t, "run")
	r := plan.Reservation{ETA: gt.Epoch().Add(time.Hour)}
	s.RestoreReservation(w.ID(), r)
	s.RestoreReservation("ns/unknown", r)
	for _, id := range []api.WorkloadID{w.ID(), "ns/unknown"} {
		if got, ok := s.Reservation(id); ok {
			t.Errorf("%s holds restored reservation %+v; want none", id, got)
		}
	}
}

// A restored wait: the preemptor waits for its restored victim still leaving instead of
// looking for others, and the workload it preempted before stays held for it instead
// of taking the room back.
func TestRestoreNominatedAndPreemptedBy(t *testing.T) {
	objs, snap := restoreWorld(t)
	snap = bind(t, snap, "ns/leaving", "big-0", 0, 1, 2, 3)
	snap = bind(t, snap, "ns/other", "small-0", 0, 1, 2, 3, 4, 5)
	quota, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	running := []placement.Running{
		{ID: "ns/leaving", Queue: "cq", StartedAt: gt.Epoch(), GPUMilli: 4000, Preemptible: true, Pods: []cluster.PodRef{{Workload: "ns/leaving", PodSet: "main"}}},
		{ID: "ns/other", Queue: "cq", StartedAt: gt.Epoch(), GPUMilli: 6000, Preemptible: true, Pods: []cluster.PodRef{{Workload: "ns/other", PodSet: "main"}}},
	}
	cycle := func(restore bool) map[api.WorkloadID]string {
		s, err := Build(objs, DefaultPolicy())
		if err != nil {
			t.Fatal(err)
		}
		pre := gpuJob("pre", "lq", 8)
		pre.Priority = 100
		held := gpuJob("held", "lq", 2) // fits small-0 now
		for _, w := range []*api.Workload{pre, held, gpuJob("leaving", "lq", 4), gpuJob("other", "lq", 6)} {
			if err := s.Submit(w, gt.Epoch(), 0); err != nil {
				t.Fatal(err)
			}
		}
		s.Started("ns/leaving", gt.Epoch())
		s.Started("ns/other", gt.Epoch())
		if restore {
			s.RestoreNominated("ns/pre", []api.WorkloadID{"ns/leaving"})
			s.RestorePreemptedBy("ns/held", "ns/pre")
			s.RestoreNominated("ns/unknown", []api.WorkloadID{"ns/leaving"}) // ignored
		}
		p := s.Cycle(World{Now: gt.Epoch().Add(time.Minute), Cluster: snap, Quota: quota, Running: running, InFlight: []api.WorkloadID{"ns/leaving"}})
		out := map[api.WorkloadID]string{}
		for _, a := range p.Admissions {
			out[a.Workload] = "admitted"
		}
		for _, r := range p.Rejections {
			out[r.Workload] = string(r.Reason)
		}
		for _, n := range p.Notices {
			out[n.Workload] = "noticed"
		}
		return out
	}
	got := cycle(true)
	if got["ns/pre"] != string(plan.ReasonWaitingForPreemption) || got["ns/held"] != string(plan.ReasonHeldForPreemptor) || got["ns/other"] != "" {
		t.Errorf("restored: %v; want pre WaitingForPreemption, held HeldForPreemptor, other untouched", got)
	}
	if base := cycle(false); base["ns/other"] != "noticed" || base["ns/held"] != "admitted" {
		t.Errorf("without restoring: %v; want pre to notice other and held admitted, or the scenario tests nothing", base)
	}
}

// RestoreHistory replaces the history (so replayed notices do not count twice), oldest
// first.
func TestRestoreHistoryReplacesSorted(t *testing.T) {
	s, w := runningOne(t, "v")
	s.Noticed(w.ID(), "ns/p", placement.PreemptionRecord{Workload: w.ID(), Queue: "cq", At: gt.Epoch().Add(2 * time.Minute)})
	recs := []placement.PreemptionRecord{
		{Workload: "ns/v", Queue: "cq", At: gt.Epoch().Add(2 * time.Minute), GPUMilli: 1000},
		{Workload: "ns/b", Queue: "cq", At: gt.Epoch(), GPUMilli: 2000},
		{Workload: "ns/a", Queue: "cq", At: gt.Epoch(), GPUMilli: 3000},
	}
	s.RestoreHistory(recs)
	h := s.History()
	if len(h) != 3 || h[0].Workload != "ns/a" || h[1].Workload != "ns/b" || h[2].Workload != "ns/v" {
		t.Fatalf("history %+v; want ns/a, ns/b (at gt.Epoch(), by name), ns/v", h)
	}
	recs[0].GPUMilli = 9 // the scheduler keeps its own copy
	if h := s.History(); h[2].GPUMilli != 1000 {
		t.Errorf("history shares the caller's slice: %+v", h[2])
	}
}
