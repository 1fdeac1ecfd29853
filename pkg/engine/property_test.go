package engine

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// TestCycleInvariants: for random clusters, quotas and pending sets, every pending
// workload gets exactly one outcome, admitted usage stays within quota, no node is
// overcommitted, the plan validates, and the same input gives the same plan.
func TestCycleInvariants(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := rapid.IntRange(0, 6).Draw(t, "nodes")
		limits := map[string]int64{"a": rapid.Int64Range(0, 20).Draw(t, "limitA"), "b": rapid.Int64Range(0, 20).Draw(t, "limitB")}
		n := rapid.IntRange(0, 25).Draw(t, "pending")
		var ws []*api.Workload
		var cqs []string
		for i := 0; i < n; i++ {
			w := gt.MakeWorkload("ns", fmt.Sprintf("w%02d", i)).CPU(1).
				CPU(rapid.Int64Range(1, 5).Draw(t, "cpu")).Pods(int32(rapid.IntRange(1, 3).Draw(t, "pods"))).
				Priority(int32(rapid.IntRange(0, 2).Draw(t, "prio"))).Created(time.Duration(rapid.IntRange(0, 100).Draw(t, "created")) * time.Second).Obj()
			ws = append(ws, w)
			cqs = append(cqs, rapid.SampledFrom([]string{"a", "b"}).Draw(t, "cq"))
		}
		strict := rapid.Bool().Draw(t, "strict")
		run := func() (Input, *fakeQuota) {
			q := newFakeQuota()
			for cq, l := range limits {
				q.limit[cq] = resourcesCPU(l)
			}
			in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(nodes, 4), Quota: q}
			for i, w := range ws {
				p := pending(w, cqs[i])
				if strict {
					p.Strategy = api.StrictFIFO
				}
				in.Pending = append(in.Pending, p)
			}
			return in, q
		}
		e, err := New(Config{}, &fakePlacer{})
		if err != nil {
			t.Fatal(err)
		}
		in1, _ := run()
		p := e.Cycle(in1)
		if err := p.Validate(); err != nil {
			t.Fatalf("invalid plan: %v", err)
		}
		outcomes := map[api.WorkloadID]int{}
		for _, a := range p.Admissions {
			outcomes[a.Workload]++
		}
		for _, r := range p.Rejections {
			outcomes[r.Workload]++
			if !slices.Contains(r.Reason.Layers(), r.Layer) || len(r.Explain()) == 0 {
				t.Fatalf("%s rejected %s in layer %s (the reason's layers: %v), explained %q", r.Workload, r.Reason, r.Layer, r.Reason.Layers(), r.Explain())
			}
		}
		for _, r := range p.Reservations {
			outcomes[r.Workload]++
		}
		for _, w := range ws {
			if outcomes[w.ID()] != 1 {
				t.Fatalf("%s has %d outcomes, want exactly 1", w.ID(), outcomes[w.ID()])
			}
		}
		used := map[string]resources.Amount{}
		for _, a := range p.Admissions {
			used[a.ClusterQueue] += a.Usage()[resources.CPU]
		}
		for cq, u := range used {
			if u > resourcesCPU(limits[cq]) {
				t.Fatalf("ClusterQueue %s admitted %d milli-CPU over its limit %d", cq, u, resourcesCPU(limits[cq]))
			}
		}
		perNode := map[string]resources.Amount{}
		for _, b := range p.Bindings {
			perNode[b.Node] += b.Requests[resources.CPU]
		}
		for node, u := range perNode {
			if u > resourcesCPU(4) {
				t.Fatalf("node %s overcommitted: %d milli-CPU of 4000", node, u)
			}
		}
		in2, _ := run()
		if again := e.Cycle(in2); !reflect.DeepEqual(p, again) {
			t.Fatalf("same input, different plans")
		}
	})
}
