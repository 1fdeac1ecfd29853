package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// annotate sets the pod ready delay annotation on pool name.
func (b *world) annotate(pool, delay string) *world {
	for i := range b.o.NodePools {
		if b.o.NodePools[i].Name == pool {
			b.o.NodePools[i].Annotations = map[string]string{api.AnnotationPodReadyDelay: delay}
		}
	}
	return b
}

// runPodsReady runs until 4h: gangs that never get Ready and retry without a limit
// would run forever.
func runPodsReady(t *testing.T, objs *api.Objects, pr PodsReady) []EventRecord {
	t.Helper()
	s, err := New(objs, Options{KeepLog: true, Policy: engine.DefaultPolicy(), PodsReady: pr, Until: 4 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s.Log()
}

// timesOf are the times of wl's records of a kind, in seconds.
func timesOf(log []EventRecord, wl string, kind EventKind) []time.Duration {
	var out []time.Duration
	for _, r := range log {
		if r.Workload == wl && r.Event == kind {
			out = append(out, r.T.Duration())
		}
	}
	return out
}

func sameTimes(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func podsReadyConfig(timeout time.Duration, block bool, r api.PodsReadyRequeuing) *api.WaitForPodsReady {
	c := api.DefaultWaitForPodsReady(timeout, block)
	c.Requeuing = r
	if c.Requeuing.Timestamp == "" {
		c.Requeuing.Timestamp = api.RequeueAtEviction
	}
	return &c
}

// On a node whose pods never get Ready the timeout evicts the job with
// PodsReadyTimeout, it is retried after 1m then 2m (the backoff doubles), and past the
// limit of 2 it is not tried again; without waitForPodsReady it sits there unfinished.
// Pods Ready before the timeout only delay the work.
func TestPodsReadyTimeoutRequeuesWithBackoff(t *testing.T) {
	m := time.Minute
	backoff := api.PodsReadyRequeuing{BackoffBase: m, BackoffMax: time.Hour, Limited: true, BackoffLimit: 2}
	cases := []struct {
		name      string
		delay     string
		cfg       *api.WaitForPodsReady
		placed    []time.Duration
		evicted   []time.Duration
		ready     []time.Duration
		finishedA []time.Duration
	}{
		{"never ready, timeout 5m", "never", podsReadyConfig(5*m, false, backoff),
			[]time.Duration{0, 6 * m, 13 * m}, []time.Duration{5 * m, 11 * m, 18 * m}, nil, nil},
		{"never ready, limit 0 deactivates at once", "never", podsReadyConfig(5*m, false, api.PodsReadyRequeuing{BackoffBase: m, Limited: true}),
			[]time.Duration{0}, []time.Duration{5 * m}, nil, nil},
		{"never ready, no waitForPodsReady", "never", nil, []time.Duration{0}, nil, nil, nil},
		{"ready after 2m, timeout 5m", "2m", podsReadyConfig(5*m, false, backoff),
			[]time.Duration{0}, nil, []time.Duration{2 * m}, []time.Duration{2*m + time.Hour}},
		{"ready exactly at the timeout", "5m", podsReadyConfig(5*m, false, backoff),
			[]time.Duration{0}, nil, []time.Duration{5 * m}, []time.Duration{5*m + time.Hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := MakeWorld().Pool("p", 1, 8, api.CapacityOnDemand).annotate("p", tc.delay).Queue("cq", 8, "p").
				Job("a", 1, 8, 0, time.Hour, 0).Obj()
			log := runPodsReady(t, objs, PodsReady{Config: tc.cfg})
			if got := timesOf(log, "ns/a", EvPlaced); !sameTimes(got, tc.placed) {
				t.Errorf("placed at %v, want %v", got, tc.placed)
			}
			if got := timesOf(log, "ns/a", EvEvicted); !sameTimes(got, tc.evicted) {
				t.Errorf("evicted at %v, want %v", got, tc.evicted)
			}
			if got := timesOf(log, "ns/a", EvPodsReady); !sameTimes(got, tc.ready) {
				t.Errorf("pods ready at %v, want %v", got, tc.ready)
			}
			if got := timesOf(log, "ns/a", EvFinished); !sameTimes(got, tc.finishedA) {
				t.Errorf("finished at %v, want %v", got, tc.finishedA)
			}
			for _, r := range log {
				if r.Event == EvEvicted && !strings.HasPrefix(r.Reason, api.ReasonPodsReadyTimeout) {
					t.Errorf("evicted for %q, want %s", r.Reason, api.ReasonPodsReadyTimeout)
				}
			}
		})
	}
}

// blockAdmission admits one gang at a time: b waits until a's pods are Ready (3m on
// the slow pool), and is held with WaitingForPodsReady meanwhile; without it both
// start at once.
func TestPodsReadyBlockAdmissionOrdersAdmissions(t *testing.T) {
	objs := MakeWorld().Pool("slow", 2, 8, api.CapacityOnDemand).annotate("slow", "3m").Queue("cq", 16, "slow").
		Job("a", 1, 8, 0, time.Hour, 0).Job("b", 1, 8, time.Second, time.Hour, 0).Obj()
	for _, tc := range []struct {
		block   bool
		placedB time.Duration
		held    bool
	}{{true, 3 * time.Minute, true}, {false, time.Second, false}} {
		log := runPodsReady(t, objs, PodsReady{Config: podsReadyConfig(10*time.Minute, tc.block, api.PodsReadyRequeuing{})})
		if got := timesOf(log, "ns/a", EvPlaced); !sameTimes(got, []time.Duration{0}) {
			t.Errorf("block=%v: a placed at %v, want [0]", tc.block, got)
		}
		if got := timesOf(log, "ns/b", EvPlaced); !sameTimes(got, []time.Duration{tc.placedB}) {
			t.Errorf("block=%v: b placed at %v, want [%s]", tc.block, got, tc.placedB)
		}
		held := false
		for _, r := range log {
			held = held || (r.Workload == "ns/b" && r.Event == EvRejected && strings.HasPrefix(r.Reason, "WaitingForPodsReady"))
		}
		if held != tc.held {
			t.Errorf("block=%v: b held WaitingForPodsReady %v, want %v", tc.block, held, tc.held)
		}
	}
}

// After a timeout the requeuing timestamp decides who goes next: by eviction time the
// evicted a queues behind b (submitted at 1m), by creation time it keeps its place.
func TestPodsReadyRequeuingTimestamp(t *testing.T) {
	objs := MakeWorld().Pool("p", 1, 8, api.CapacityOnDemand).annotate("p", "never").Queue("cq", 8, "p").
		Job("a", 1, 8, 0, time.Hour, 0).Job("b", 1, 8, time.Minute, time.Hour, 0).Obj()
	for ts, want := range map[api.RequeuingTimestamp]string{api.RequeueAtEviction: "ns/b", api.RequeueAtCreation: "ns/a"} {
		cfg := podsReadyConfig(5*time.Minute, false, api.PodsReadyRequeuing{Timestamp: ts})
		log := runPodsReady(t, objs, PodsReady{Config: cfg})
		var next string
		for _, r := range log {
			if r.Event == EvPlaced && r.T.Duration() == 5*time.Minute {
				next = r.Workload
				break
			}
		}
		if next != want {
			t.Errorf("timestamp %s: placed at 5m %q, want %q", ts, next, want)
		}
	}
}

// A bad annotation or setting is an error naming it.
func TestPodsReadyBadSettings(t *testing.T) {
	objs := MakeWorld().Pool("p", 1, 8, api.CapacityOnDemand).annotate("p", "soon").Queue("cq", 8, "p").Obj()
	if _, err := New(objs, Options{Policy: engine.DefaultPolicy()}); err == nil || !strings.Contains(err.Error(), api.AnnotationPodReadyDelay) {
		t.Errorf("bad annotation: %v, want an error naming %s", err, api.AnnotationPodReadyDelay)
	}
	good := MakeWorld().Pool("p", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "p").Obj()
	bad := podsReadyConfig(0, false, api.PodsReadyRequeuing{})
	if _, err := New(good, Options{Policy: engine.DefaultPolicy(), PodsReady: PodsReady{Config: bad}}); err == nil || !strings.Contains(err.Error(), "waitForPodsReady.timeout") {
		t.Errorf("zero timeout: %v, want an error naming waitForPodsReady.timeout", err)
	}
}
