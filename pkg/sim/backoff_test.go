package sim

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// A job evicted by a node failure waits out the requeue backoff before it is placed
// again, even when no other event comes to run a cycle; a preempted or drained one
// would not (only failures count), and without a policy it is placed as soon as the
// node is back.
func TestRequeueBackoffAfterNodeFailure(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("flaky", 1, 8, 0, 2*time.Hour, 0).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "fail"}, Type: api.EventNodeFail, At: 10 * time.Minute, Nodes: []string{"h-0"}}).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "back"}, Type: api.EventNodeRecover, At: 11 * time.Minute, Nodes: []string{"h-0"}}).
		Obj()
	placedAt := func(pol engine.RequeuePolicy) []Seconds {
		p := engine.DefaultPolicy()
		p.Requeue = pol
		s, err := New(objs, Options{KeepLog: true, Policy: p})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		var at []Seconds
		for _, r := range s.Log() {
			if r.Event == EvPlaced {
				at = append(at, r.T)
			}
		}
		return at
	}
	if got := placedAt(engine.RequeuePolicy{}); len(got) != 2 || got[1] != Seconds(11*time.Minute) {
		t.Errorf("without backoff placed at %v, want [0 660]", got)
	}
	if got := placedAt(engine.RequeuePolicy{BackoffBase: 5 * time.Minute, BackoffMax: time.Hour}); len(got) != 2 || got[1] != Seconds(15*time.Minute) {
		t.Errorf("with a 5m backoff placed at %v, want [0 900]", got)
	}
	if got := placedAt(engine.RequeuePolicy{BackoffBase: 5 * time.Minute, BackoffLimit: 0}); len(got) != 2 {
		t.Errorf("no limit: placed at %v, want twice", got)
	}
}

// Past the limit the job is not placed again: with limit 1 it comes back after its
// first failure and not after its second.
func TestRequeueLimitStopsRetries(t *testing.T) {
	w := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("flaky", 1, 8, 0, 2*time.Hour, 0)
	for i, at := range []time.Duration{10 * time.Minute, 20 * time.Minute} {
		w.Event(api.ClusterEvent{Meta: api.Meta{Name: fmt.Sprintf("fail-%d", i)}, Type: api.EventNodeFail, At: at, Nodes: []string{"h-0"}}).
			Event(api.ClusterEvent{Meta: api.Meta{Name: fmt.Sprintf("back-%d", i)}, Type: api.EventNodeRecover, At: at + time.Minute, Nodes: []string{"h-0"}})
	}
	objs := w.Obj()
	p := engine.DefaultPolicy()
	p.Requeue = engine.RequeuePolicy{BackoffBase: time.Minute, BackoffLimit: 1}
	s, err := New(objs, Options{KeepLog: true, Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	placed := 0
	for _, r := range s.Log() {
		if r.Event == EvPlaced {
			placed++
		}
	}
	if placed != 2 {
		t.Fatalf("placed %d times with limit 1 and two failures, want 2", placed)
	}
	for _, r := range s.Log() {
		if r.Event == EvFinished {
			t.Fatalf("the job finished after exceeding the requeue limit: %+v", r)
		}
	}
}
