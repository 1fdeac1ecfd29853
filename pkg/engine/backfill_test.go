package engine

import (
	"strings"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// gpus is a whole-GPU assignment of the given indices.
func gpus(idx ...int) devices.Assignment {
	a := devices.Assignment{}
	for _, i := range idx {
		a.Devices = append(a.Devices, devices.Device{GPU: i, Kind: devices.WholeGPU, Milli: 1000})
	}
	return a
}

// gpuNode is one node of 8 H100s ("g-0") with the given pods bound.
func gpuNode(t *testing.T, bound ...cluster.BoundPod) *cluster.Snapshot {
	t.Helper()
	return gpuNodes(t, 1, bound...)
}

// gpuNodes is n nodes of 8 H100s ("g-0", "g-1", ...) with the given pods bound.
func gpuNodes(t *testing.T, n int, bound ...cluster.BoundPod) *cluster.Snapshot {
	t.Helper()
	nodes, err := cluster.ExpandPool(api.NodePool{Meta: api.Meta{Name: "g"}, Count: n, GPUModel: "H100", GPUsPerNode: 8,
		CPU: 64000, Memory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := make([]cluster.Change, 0, len(bound))
	for _, bp := range bound {
		ch = append(ch, cluster.Change{Op: cluster.OpBind, Pod: bp})
	}
	if snap, err = snap.Apply(ch); err != nil {
		t.Fatal(err)
	}
	return snap
}

func gpuWorkload(name string, n int64, created time.Duration) *api.Workload {
	return gt.MakeWorkload("ns", name).CPU(1).GPUs(n).Created(created).Obj()
}

func podOf(w api.WorkloadID, node string, a devices.Assignment) cluster.BoundPod {
	return cluster.BoundPod{Ref: cluster.PodRef{Workload: w, PodSet: "main"}, Node: node,
		Requests: resources.Vector{resources.CPU: 1000}, Devices: a}
}

// fixedReservation is the real placer with a fixed device-level reservation answer, so
// a test controls exactly which GPUs are held.
type fixedReservation struct {
	Placer
	res  map[api.WorkloadID]plan.Reservation
	seen []PlaceCall // Reserve calls
}

func (f *fixedReservation) Reserve(c PlaceCall) (plan.Reservation, bool) {
	f.seen = append(f.seen, c)
	r, ok := f.res[c.Workload.ID()]
	return r, ok
}

// TestBackfillOntoNonReservedGPUs: a reservation holds GPUs 0-5 of a node (4 of them
// busy until +1h, 2 free now). A job with no runtime bound is steered onto the two GPUs
// no reservation needs; a second one finds nothing left; a short job that ends before the
// ETA may still use the reserved free GPUs.
func TestBackfillOntoNonReservedGPUs(t *testing.T) {
	snap := gpuNode(t, podOf("ns/run", "g-0", gpus(0, 1, 2, 3)))
	node := snap.Node(0).Name
	eta := gt.Epoch().Add(time.Hour)
	held := []cluster.BoundPod{
		podOf("ns/big", node, gpus(0, 1, 2, 3, 4, 5)),
	}
	fr := &fixedReservation{Placer: NewPlacer(PlacerConfig{Seed: 1}),
		res: map[api.WorkloadID]plan.Reservation{"ns/big": {Nodes: []string{node}, ETA: eta, Pods: held}}}
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	big := pending(gpuWorkload("big", 6, 0), "cq")
	long1 := pending(gpuWorkload("long1", 2, time.Minute), "cq")
	long2 := pending(gpuWorkload("long2", 1, 2*time.Minute), "cq")
	short := pending(gpuWorkload("short", 2, 3*time.Minute), "cq")
	short.Runtime = 30 * time.Minute
	big.Workload.Priority = 5
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snap, Quota: q, Pending: []Pending{big, long1, long2, short},
		Running: []placement.Running{{ID: "ns/run", Queue: "cq", Pods: []cluster.PodRef{held[0].Ref}, ExpectedEnd: eta, GPUMilli: 4000}}}
	in.Running[0].Pods = []cluster.PodRef{{Workload: "ns/run", PodSet: "main"}}
	p := mustEngine(t, Config{Reservations: true}, fr).Cycle(in)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id string
		// want is the outcome: "reserved", "admitted" or "layer:reason".
		want string
		// devices are the device IDs the admitted workload must get (nil: not checked).
		devices []string
	}{
		{id: "ns/big", want: "reserved"},
		{id: "ns/long1", want: "admitted", devices: []string{"GPU-6", "GPU-7"}},
		{id: "ns/long2", want: "placement:" + string(plan.ReasonQuotaFitsClusterDoesNot)},
		{id: "ns/short", want: "admitted", devices: []string{"GPU-4", "GPU-5"}},
	}
	for _, tc := range tests {
		if o := outcome(p, tc.id); o != tc.want {
			t.Errorf("%s: %s, want %s", tc.id, o, tc.want)
			continue
		}
		if tc.devices != nil {
			bs := p.BindingsOf(api.WorkloadID(tc.id))
			if len(bs) != 1 || strings.Join(bs[0].Devices, ",") != strings.Join(tc.devices, ",") {
				t.Errorf("%s: bindings %+v, want devices %v", tc.id, bs, tc.devices)
			}
		}
	}
}

// TestReserveGetsHeldAndPrevious: the second head's reservation walk sees the first
// head's reservation as held, and each head gets its own previous reservation back.
func TestReserveGetsHeldAndPrevious(t *testing.T) {
	snap := gpuNode(t, podOf("ns/run", "g-0", gpus(0, 1, 2, 3, 4, 5, 6, 7)))
	node := snap.Node(0).Name
	eta := gt.Epoch().Add(time.Hour)
	prev := plan.Reservation{Workload: "ns/b", Nodes: []string{node}, ETA: eta.Add(time.Hour),
		Pods: []cluster.BoundPod{podOf("ns/b", node, gpus(4, 5, 6, 7))}}
	fr := &fixedReservation{Placer: NewPlacer(PlacerConfig{Seed: 1}), res: map[api.WorkloadID]plan.Reservation{
		"ns/a": {ETA: eta, Nodes: []string{node}, Pods: []cluster.BoundPod{podOf("ns/a", node, gpus(0, 1, 2, 3))}},
		"ns/b": prev,
	}}
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	a := pending(gpuWorkload("a", 4, 0), "cq")
	a.Workload.Priority = 9
	b := pending(gpuWorkload("b", 4, time.Minute), "cq")
	in := Input{Cycle: 2, Now: gt.Epoch(), Cluster: snap, Quota: q, Pending: []Pending{a, b},
		Previous: map[api.WorkloadID]plan.Reservation{"ns/b": prev}}
	p := mustEngine(t, Config{Reservations: true}, fr).Cycle(in)
	if len(p.Reservations) != 2 || len(fr.seen) != 2 {
		t.Fatalf("reservations %+v, reserve calls %d; want 2 and 2", p.Reservations, len(fr.seen))
	}
	first, second := fr.seen[0], fr.seen[1]
	if len(first.Held) != 0 || first.Previous != nil {
		t.Errorf("first head: held %v previous %v, want none", first.Held, first.Previous)
	}
	if len(second.Held) != 1 || second.Held[0].Workload != "ns/a" {
		t.Errorf("second head: held %+v, want ns/a's reservation", second.Held)
	}
	if second.Previous == nil || !second.Previous.Start.Equal(prev.ETA) || len(second.Previous.Pods) != 1 {
		t.Errorf("second head: previous %+v, want its reservation from the last cycle", second.Previous)
	}
}

// noticePlacer is fakePlacer whose preemption answers carry placement notices and
// budget records, and which remembers the history each Preempt call saw.
type noticePlacer struct {
	fakePlacer
	grace     time.Duration
	histories [][]placement.PreemptionRecord
}

func (p *noticePlacer) Preempt(c PlaceCall) PreemptResult {
	p.histories = append(p.histories, c.History)
	out := p.fakePlacer.Preempt(c)
	for _, v := range out.Victims {
		out.Notices = append(out.Notices, placement.Notice{Workload: v, NoticeAt: c.Now, EvictAt: c.Now.Add(p.grace), Reason: "placement says so"})
		out.Records = append(out.Records, placement.PreemptionRecord{Workload: v, Queue: "cq", At: c.Now, GPUMilli: 1000})
	}
	return out
}

// TestPlacementNoticesAndHistory: notices carry placement's eviction time and reason,
// and a second preemptor in the same cycle sees the first one's preemption in its
// history (so one disruption budget is not spent twice).
func TestPlacementNoticesAndHistory(t *testing.T) {
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	np := &noticePlacer{grace: 5 * time.Minute, fakePlacer: fakePlacer{victims: map[api.WorkloadID][]api.WorkloadID{
		"ns/hi1": {"ns/lo1"}, "ns/hi2": {"ns/lo2"}}}}
	past := placement.PreemptionRecord{Workload: "ns/old", Queue: "cq", At: gt.Epoch().Add(-time.Minute), GPUMilli: 1000}
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(0, 4), Quota: q,
		Pending: []Pending{pending(gt.MakeWorkload("ns", "hi1").CPU(1).Priority(10).Obj(), "cq"), pending(gt.MakeWorkload("ns", "hi2").CPU(1).Priority(10).Created(time.Second).Obj(), "cq")},
		Running: []placement.Running{{ID: "ns/lo1"}, {ID: "ns/lo2"}}, History: []placement.PreemptionRecord{past}}
	p := mustEngine(t, Config{Preemption: true, Grace: time.Minute}, np).Cycle(in)
	if len(p.Notices) != 2 {
		t.Fatalf("notices = %+v, want 2", p.Notices)
	}
	for _, n := range p.Notices {
		if n.Grace != 5*time.Minute || !n.EvictAt.Equal(gt.Epoch().Add(5*time.Minute)) || n.Reason != "placement says so" {
			t.Errorf("notice %+v: want placement's 5m grace, eviction at +5m and its reason", n)
		}
	}
	if len(np.histories) != 2 || len(np.histories[0]) != 1 || len(np.histories[1]) != 2 || np.histories[1][1].Workload != "ns/lo1" {
		t.Errorf("histories seen = %+v, want [old] then [old, lo1]", np.histories)
	}
	if len(in.History) != 1 {
		t.Errorf("input history changed: %+v", in.History)
	}
}

// TestNoRoomForGang: two nodes with 4 free GPUs each have the 8 free GPUs an 8-GPU pod
// needs in total but no node that can host it. With a reservation slot the pod gets a
// reservation whose reason is the room gate's (placement was not asked); without one
// it is rejected with placement's per-node diagnosis, as if placement had been asked
// first. A 4-GPU pod still places.
func TestNoRoomForGang(t *testing.T) {
	var running []placement.Running
	var bound []cluster.BoundPod
	for _, node := range []string{"g-0", "g-1"} {
		id := api.WorkloadID("ns/run-" + node)
		bound = append(bound, podOf(id, node, gpus(0, 1, 2, 3)))
		running = append(running, placement.Running{ID: id, Queue: "cq", GPUMilli: 4000, ExpectedEnd: gt.Epoch().Add(time.Hour),
			Pods: []cluster.PodRef{{Workload: id, PodSet: "main"}}})
	}
	snap := gpuNodes(t, 2, bound...)
	for _, reserve := range []bool{true, false} {
		q := newFakeQuota()
		q.limit["cq"] = resourcesCPU(100)
		big := pending(gpuWorkload("big", 8, 0), "cq")
		small := pending(gpuWorkload("small", 4, time.Minute), "cq")
		counted := &countingPlacer{Placer: NewPlacer(PlacerConfig{Seed: 1})}
		p := mustEngine(t, Config{Reservations: reserve}, counted).Cycle(
			Input{Cycle: 1, Now: gt.Epoch(), Cluster: snap, Quota: q, Pending: []Pending{big, small}, Running: running})
		if o := outcome(p, "ns/small"); o != "admitted" {
			t.Fatalf("reservations %v: small: %s, want admitted", reserve, o)
		}
		if reserve {
			if o, n := outcome(p, "ns/big"), counted.places; o != "reserved" || n != 1 {
				t.Fatalf("big: %s, %d placements, want reserved and small's placement only", o, n)
			}
			continue
		}
		var r plan.Rejection
		for _, x := range p.Rejections {
			if x.Workload == "ns/big" {
				r = x
			}
		}
		if r.Evidence == nil || r.Evidence.Place == nil || r.Evidence.Place.Diagnosis == nil || r.Evidence.Place.Code == plan.ReasonNoRoomForGang {
			t.Fatalf("big: %+v, want a rejection with placement's diagnosis", r)
		}
	}
}

// A gang refused after its reservation walk found no start says so (Evidence.NoStart):
// that walk placed it pod by pod on the cluster as each end would leave it, so new
// scores may give it one (Scheduler.syncShapes). Without reservations none is looked
// for.
func TestNoStartMarksAFailedReservationWalk(t *testing.T) {
	snap := gpuNode(t, podOf("ns/run", "g-0", gpus(0, 1, 2, 3)))
	for _, reserve := range []bool{true, false} {
		q := newFakeQuota()
		q.limit["cq"] = resourcesCPU(100)
		in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snap, Quota: q, Pending: []Pending{pending(gpuWorkload("big", 8, 0), "cq")},
			Running: []placement.Running{{ID: "ns/run", Queue: "cq", Pods: []cluster.PodRef{{Workload: "ns/run", PodSet: "main"}}, GPUMilli: 4000}}}
		p := mustEngine(t, Config{Reservations: reserve}, NewPlacer(PlacerConfig{Seed: 1})).Cycle(in) // ns/run has no known end
		if len(p.Rejections) != 1 || p.Rejections[0].Reason != plan.ReasonQuotaFitsClusterDoesNot {
			t.Fatalf("reservations %v: rejections %+v, want ns/big refused by the nodes", reserve, p.Rejections)
		}
		if got := p.Rejections[0].Evidence.NoStart; got != reserve {
			t.Errorf("reservations %v: NoStart %v", reserve, got)
		}
	}
}
