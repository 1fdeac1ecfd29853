package bench

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// TestQueueModelETA: 8 GPUs, two 4-GPU jobs running (ending at 100 s and 300 s); waiting
// are a whole-pool job p1 and, submitted later at a higher priority, p2 (2 GPUs). A
// 2-GPU job "me" arrives at 30 s. At 100 s p2 starts; best-effort queues let me take the
// last 2 GPUs then, but a strict queue holds me behind p1, which can start only at 300 s
// and ends at 350 s.
func TestQueueModelETA(t *testing.T) {
	s := time.Second
	facts := map[string]jobFacts{
		"r1": {queue: "a", gpus: 4, run: 100 * s},
		"r2": {queue: "a", gpus: 4, run: 300 * s},
		"p1": {queue: "a", gpus: 8, run: 50 * s},
		"p2": {queue: "a", gpus: 2, run: 20 * s},
		"me": {queue: "a", gpus: 2, run: 10 * s},
	}
	at := func(d time.Duration) sim.Seconds { return sim.Seconds(d) }
	events := []sim.EventRecord{
		{T: 0, Event: sim.EvSubmitted, Workload: "r1"}, {T: 0, Event: sim.EvPlaced, Workload: "r1"},
		{T: 0, Event: sim.EvSubmitted, Workload: "r2"}, {T: 0, Event: sim.EvPlaced, Workload: "r2"},
		{T: at(10 * s), Event: sim.EvSubmitted, Workload: "p1"},
		{T: at(20 * s), Event: sim.EvSubmitted, Workload: "p2", Priority: 5},
		{T: at(30 * s), Event: sim.EvSubmitted, Workload: "me"},
	}
	tests := []struct {
		name   string
		strict bool
		want   time.Duration
	}{
		{name: "best effort", want: 100 * s},
		{name: "strict", strict: true, want: 350 * s},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newQueueModel(8, tc.strict, facts)
			for _, e := range events {
				m.observe(e)
			}
			got, ok := m.eta("me", 30*s, declaredLeft)
			if !ok || got != tc.want {
				t.Errorf("eta = %v, %v; want %v", got, ok, tc.want)
			}
		})
	}
}

// TestQueueModelFollowsEvictions: a preempted job frees its GPUs, waits again with
// the work it did, and needs only the rest when it runs again.
func TestQueueModelFollowsEvictions(t *testing.T) {
	s := time.Second
	facts := map[string]jobFacts{"long": {queue: "a", gpus: 8, run: 1000 * s}, "short": {queue: "a", gpus: 8, run: 100 * s}, "me": {queue: "a", gpus: 8, run: 10 * s}}
	m := newQueueModel(8, false, facts)
	for _, e := range []sim.EventRecord{
		{T: 0, Event: sim.EvSubmitted, Workload: "long"}, {T: 0, Event: sim.EvPlaced, Workload: "long"},
		{T: sim.Seconds(200 * s), Event: sim.EvSubmitted, Workload: "short", Priority: 1},
		{T: sim.Seconds(300 * s), Event: sim.EvEvicted, Workload: "long"},
		{T: sim.Seconds(300 * s), Event: sim.EvRequeued, Workload: "long"},
		{T: sim.Seconds(300 * s), Event: sim.EvPlaced, Workload: "short"},
		{T: sim.Seconds(350 * s), Event: sim.EvSubmitted, Workload: "me"},
	} {
		m.observe(e)
	}
	if m.used != 8 || len(m.pending) != 2 {
		t.Fatalf("used %d GPUs, %d waiting; want 8 and 2", m.used, len(m.pending))
	}
	// short ends at 400 s; long, queued at 300 s ahead of me, needs its last 700 s.
	if got, ok := m.eta("me", 350*s, declaredLeft); !ok || got != 1100*s {
		t.Errorf("eta = %v, %v; want 1100s", got, ok)
	}
	m.observe(sim.EventRecord{T: sim.Seconds(400 * s), Event: sim.EvFinished, Workload: "short"})
	if m.used != 0 || len(m.running) != 0 {
		t.Errorf("after the finish: used %d, running %d", m.used, len(m.running))
	}
}
