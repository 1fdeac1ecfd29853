package engine

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"pgregory.net/rapid"
)

// TestSlotSeekersReserveAsIfVisited: handing the workloads no node can host apart, as
// slot seekers, changes no admission and no reservation: the slots go to the same
// workloads, in the same order, as when every workload is visited; the seekers left
// unvisited are ones the full cycle only rejected.
func TestSlotSeekersReserveAsIfVisited(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		depth := rapid.IntRange(1, 4).Draw(t, "depth")
		n := rapid.IntRange(1, 20).Draw(t, "pending")
		var ps []Pending
		seeker := map[api.WorkloadID]bool{}
		eta := map[api.WorkloadID]time.Duration{}
		for i := 0; i < n; i++ {
			cpu := rapid.Int64Range(1, 7).Draw(t, "cpu") // nodes have 4: above that no node hosts it
			w := gt.MakeWorkload("ns", fmt.Sprintf("w%02d", i)).CPU(cpu).
				Priority(int32(rapid.IntRange(0, 2).Draw(t, "prio"))).
				Created(time.Duration(rapid.IntRange(0, 50).Draw(t, "created")) * time.Second).Obj()
			ps = append(ps, pending(w, rapid.SampledFrom([]string{"a", "b"}).Draw(t, "cq")))
			seeker[w.ID()] = cpu > 4
			if rapid.Bool().Draw(t, "reservable") {
				eta[w.ID()] = time.Duration(i+1) * time.Minute
			}
		}
		run := func(split bool) plan.Plan {
			q := newFakeQuota()
			q.limit["a"], q.limit["b"] = resourcesCPU(10), resourcesCPU(8)
			q.share["a"], q.share["b"] = 3, 5
			e, err := New(Config{Reservations: true, ReservationDepth: depth}, &fakePlacer{eta: eta})
			if err != nil {
				t.Fatal(err)
			}
			in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(2, 4), Quota: q}
			for _, p := range ps {
				if split && seeker[p.Workload.ID()] {
					in.SlotSeekers = append(in.SlotSeekers, SeekerClass{Class: string(p.Workload.ID()), First: p})
				} else {
					in.Pending = append(in.Pending, p)
				}
			}
			return e.Cycle(in)
		}
		all, split := run(false), run(true)
		if !reflect.DeepEqual(all.Admissions, split.Admissions) {
			t.Fatalf("admissions differ:\n all   %v\n split %v", all.Admissions, split.Admissions)
		}
		if !reflect.DeepEqual(all.Reservations, split.Reservations) {
			t.Fatalf("reservations differ:\n all   %v\n split %v", all.Reservations, split.Reservations)
		}
		outcome := map[api.WorkloadID]bool{}
		for _, r := range split.Rejections {
			outcome[r.Workload] = true
		}
		for _, r := range split.Reservations {
			outcome[r.Workload] = true
		}
		for _, a := range split.Admissions {
			outcome[a.Workload] = true
		}
		for _, p := range ps {
			id := p.Workload.ID()
			if !outcome[id] && !seeker[id] {
				t.Fatalf("%s is no seeker and got no outcome", id)
			}
		}
	})
}

// TestSeekersNarrowedByHolds: once the only reservation slot is taken (big holds GPUs
// 0-5, of which 4 and 5 are free), a slot seeker of 3 GPUs with no runtime bound
// cannot be hosted by the free GPUs the hold leaves (6 and 7) and is not visited; one
// that ends before the reservation starts is not held against, is visited and
// backfills; the same shape handed in Pending is visited and rejected.
func TestSeekersNarrowedByHolds(t *testing.T) {
	snap := gpuNode(t, podOf("ns/run", "g-0", gpus(0, 1, 2, 3)))
	node := snap.Node(0).Name
	eta := gt.Epoch().Add(time.Hour)
	fr := &fixedReservation{Placer: NewPlacer(PlacerConfig{Seed: 1}), res: map[api.WorkloadID]plan.Reservation{
		"ns/big": {Nodes: []string{node}, ETA: eta, Pods: []cluster.BoundPod{podOf("ns/big", node, gpus(0, 1, 2, 3, 4, 5))}}}}
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	big := pending(gpuWorkload("big", 6, 0), "cq")
	big.Workload.Priority = 5
	long := pending(gpuWorkload("long", 3, time.Minute), "cq")
	visited := pending(gpuWorkload("visited", 3, 2*time.Minute), "cq")
	short := pending(gpuWorkload("short", 3, 3*time.Minute), "cq")
	short.Runtime = 30 * time.Minute
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snap, Quota: q, Pending: []Pending{big, visited},
		SlotSeekers: []SeekerClass{{Class: "long", First: long}, {Class: "short", First: short, MinRuntime: short.Runtime}},
		Running: []placement.Running{{ID: "ns/run", Queue: "cq", ExpectedEnd: eta, GPUMilli: 4000,
			Pods: []cluster.PodRef{{Workload: "ns/run", PodSet: "main"}}}}}
	p := mustEngine(t, Config{Reservations: true, ReservationDepth: 1}, fr).Cycle(in)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ns/big": "reserved", "ns/long": "none", "ns/short": "admitted",
		"ns/visited": "placement:" + string(plan.ReasonQuotaFitsClusterDoesNot),
	}
	for id, w := range want {
		if o := outcome(p, id); o != w {
			t.Errorf("%s: %s, want %s", id, o, w)
		}
	}
}
