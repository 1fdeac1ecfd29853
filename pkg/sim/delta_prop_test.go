package sim

import (
	"cmp"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// Property: in random worlds under random event sequences (the worlds of
// TestInvariantsProperty), the state rebuilt from the deltas alone equals the state
// State builds from scratch, after every settled instant.
func TestDeltasRebuildTheState(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := drawInvariantWorld(rt)
		m := newDeltaMirror()
		full := 0 // samples a plain observer got alongside
		plain := ObserverFuncs{Sample: func(ClusterState) { full++ }}
		s, err := New(w.objs, Options{Until: w.until, Policy: w.policy, Observers: []Observer{m, plain}})
		if err != nil {
			rt.Fatalf("simulator refused the world: %v", err)
		}
		m.s = s
		if err := s.Run(); err != nil {
			rt.Fatalf("simulation failed: %v", err)
		}
		if m.err != nil {
			rt.Fatalf("world of %s: %v", describeWorld(w), m.err)
		}
		if m.samples == 0 || m.samples != full {
			rt.Fatalf("%d deltas, %d full samples: want the same, not zero", m.samples, full)
		}
	})
}

// The first delta carries every node and queue; a sample after the last event, where
// nothing changed, carries nothing.
func TestFirstDeltaIsWholeStateAndQuietInstantsAreEmpty(t *testing.T) {
	objs := MakeWorld().Pool("h", 3, 8, api.CapacityOnDemand).Queue("cq", 24, "h").
		Job("a", 2, 8, 0, time.Hour, 0).Job("b", 1, 4, time.Minute, 2*time.Hour, 0).Job("c", 3, 8, 0, time.Hour, 0).
		Event(api.ClusterEvent{Meta: api.Meta{Name: "fail"}, Type: api.EventNodeFail, At: 30 * time.Minute, Nodes: []string{"h-2"}}).Obj()
	m := newDeltaMirror()
	var deltas []StateDelta
	s, err := New(objs, Options{Until: 10 * time.Hour, Observers: []Observer{deltaRecorder{mirror: m, deltas: &deltas}}})
	if err != nil {
		t.Fatal(err)
	}
	m.s = s
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if m.err != nil {
		t.Fatal(m.err)
	}
	first, last := deltas[0], deltas[len(deltas)-1]
	if len(first.Nodes) != 3 || len(first.Queues) != 1 || len(first.Pending) != 1 {
		t.Errorf("first delta: %d nodes, %d queues, %d pending pod sets; want 3, 1, 1", len(first.Nodes), len(first.Queues), len(first.Pending))
	}
	if last.T.Duration() != 10*time.Hour || len(last.Nodes)+len(last.Queues)+len(last.Pending)+len(last.Resolved) != 0 {
		t.Errorf("the last sample, after every event, is %+v; want nothing changed at 10h", last)
	}
}

// deltaMirror is a DeltaObserver that applies every delta to its own copy of the state
// and compares the copy with State at each sample, keeping the first difference.
type deltaMirror struct {
	s       *Simulator
	nodes   map[string][]NodeState
	queues  map[string]QueueState
	pending map[string][]PendingShape
	samples int
	err     error
}

func newDeltaMirror() *deltaMirror {
	return &deltaMirror{nodes: map[string][]NodeState{}, queues: map[string]QueueState{}, pending: map[string][]PendingShape{}}
}

func (m *deltaMirror) OnEvent(EventRecord) {}

func (m *deltaMirror) OnSample(ClusterState) {
	if m.err == nil {
		m.err = fmt.Errorf("OnSample called on a DeltaObserver")
	}
}

func (m *deltaMirror) OnDelta(d StateDelta) {
	m.samples++
	m.apply(d)
	if m.err == nil {
		if err := m.compare(m.s.State()); err != nil {
			m.err = fmt.Errorf("at %s (sample %d): %w", m.s.now, m.samples, err)
		}
	}
}

// apply replaces the rows of every node named in d, the named queues, and the pending
// pod sets of the workloads d names.
func (m *deltaMirror) apply(d StateDelta) {
	named := map[string]bool{}
	for _, n := range d.Nodes {
		if !named[n.Name] {
			named[n.Name] = true
			m.nodes[n.Name] = nil
		}
		m.nodes[n.Name] = append(m.nodes[n.Name], n)
	}
	for _, q := range d.Queues {
		m.queues[q.Name] = q
	}
	for _, w := range d.Resolved {
		delete(m.pending, w)
	}
	for _, p := range d.Pending {
		m.pending[p.Workload] = append(m.pending[p.Workload], p)
	}
}

// compare reports the first difference between the rebuilt state and want.
func (m *deltaMirror) compare(want ClusterState) error {
	var nodes []NodeState
	for _, name := range slices.Sorted(maps.Keys(m.nodes)) {
		nodes = append(nodes, m.nodes[name]...)
	}
	if got, exp := normalRows(nodes), normalRows(want.Nodes); !reflect.DeepEqual(got, exp) {
		return fmt.Errorf("nodes differ:\nrebuilt %+v\nState   %+v", got, exp)
	}
	wantQ := map[string]QueueState{}
	for _, q := range want.Queues {
		wantQ[q.Name] = q
	}
	if !reflect.DeepEqual(m.queues, wantQ) {
		return fmt.Errorf("queues differ:\nrebuilt %+v\nState   %+v", m.queues, wantQ)
	}
	var pending []PendingShape
	for _, w := range slices.Sorted(maps.Keys(m.pending)) {
		pending = append(pending, m.pending[w]...)
	}
	if !reflect.DeepEqual(pending, want.Pending) {
		return fmt.Errorf("pending differs:\nrebuilt %+v\nState   %+v", pending, want.Pending)
	}
	return nil
}

// normalRows sorts a copy of rows totally (State orders a node's two rows, live and
// offline, arbitrarily).
func normalRows(rows []NodeState) []NodeState {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b NodeState) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(len(a.GPUs), len(b.GPUs)))
	})
	return out
}

// deltaRecorder keeps every delta and hands it on to a mirror.
type deltaRecorder struct {
	mirror *deltaMirror
	deltas *[]StateDelta
}

func (r deltaRecorder) OnEvent(EventRecord)   {}
func (r deltaRecorder) OnSample(ClusterState) { r.mirror.OnSample(ClusterState{}) }
func (r deltaRecorder) OnDelta(d StateDelta) {
	*r.deltas = append(*r.deltas, d)
	r.mirror.OnDelta(d)
}
