package sim

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// kindCounter counts the events it is handed by kind; with skip set it declares, as an
// EventFilter, that it does not read that kind.
type kindCounter struct {
	skip EventKind
	seen map[EventKind]int
}

func (k *kindCounter) OnEvent(r EventRecord)       { k.seen[r.Event]++ }
func (k *kindCounter) OnSample(ClusterState)       {}
func (k *kindCounter) WantsEvent(e EventKind) bool { return e != k.skip }

// allKinds reads every kind (no EventFilter).
type allKinds struct{ seen map[EventKind]int }

func (a *allKinds) OnEvent(r EventRecord) { a.seen[r.Event]++ }
func (a *allKinds) OnSample(ClusterState) {}

// An observer that filters out rejections is not handed any, while one beside it that
// reads everything sees them all; with only the filtering observer (and no kept log) the
// run decides the same, it just builds no rejection records.
func TestEventFilter(t *testing.T) {
	objs := func() *api.Objects {
		return MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
			Job("a", 1, 8, 0, time.Hour, 0).Job("b", 1, 8, 0, time.Hour, 0).Obj()
	}
	pol := engine.Policy{Config: engine.Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}, Seed: 1}
	filtered, all := &kindCounter{skip: EvRejected, seen: map[EventKind]int{}}, &allKinds{seen: map[EventKind]int{}}
	s, err := New(objs(), Options{Policy: pol, Observers: []Observer{filtered, all}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if all.seen[EvRejected] == 0 {
		t.Fatal("b waited for a, yet no rejection was recorded: the test says nothing")
	}
	if filtered.seen[EvRejected] != 0 {
		t.Errorf("the filtering observer was handed %d rejections", filtered.seen[EvRejected])
	}
	if filtered.seen[EvPlaced] != 2 || all.seen[EvPlaced] != 2 {
		t.Errorf("placements seen: filtered %d, all %d, want 2 each", filtered.seen[EvPlaced], all.seen[EvPlaced])
	}
	alone := &kindCounter{skip: EvRejected, seen: map[EventKind]int{}}
	s2, err := New(objs(), Options{Policy: pol, Observers: []Observer{alone}})
	if err != nil {
		t.Fatal(err)
	}
	if s2.wants(EvRejected) || !s2.wants(EvPlaced) {
		t.Errorf("wants(rejected) = %v, wants(placed) = %v; want false, true", s2.wants(EvRejected), s2.wants(EvPlaced))
	}
	if err := s2.Run(); err != nil {
		t.Fatal(err)
	}
	if alone.seen[EvPlaced] != 2 || alone.seen[EvFinished] != 2 {
		t.Errorf("alone: placed %d, finished %d, want 2 and 2", alone.seen[EvPlaced], alone.seen[EvFinished])
	}
}
