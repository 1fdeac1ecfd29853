package sim

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
)

// busyWorld is a small version of the simulate benchmark: jobs of 1-8 GPUs arriving
// every 30s on spot and on-demand nodes, with a spot interruption that returns.
func busyWorld(jobs int) *api.Objects {
	w := MakeWorld().Pool("spot", 2, 8, api.CapacitySpot).Pool("od", 4, 8, api.CapacityOnDemand).Queue("cq", 40, "spot", "od")
	for i := 0; i < jobs; i++ {
		w.Job(fmt.Sprintf("j%04d", i), 1, int64(1<<(i%4)), time.Duration(i)*30*time.Second, time.Duration(20+i%90)*time.Minute, 10*time.Minute)
	}
	return w.Event(api.ClusterEvent{Meta: api.Meta{Name: "r"}, Type: api.EventSpotInterruption, At: time.Hour, Pool: "spot",
		Notice: 2 * time.Minute, ReturnAfter: 30 * time.Minute}).Obj()
}

// scenarioPolicy is the engine policy of the scenario tests.
var scenarioPolicy = engine.Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}

// simulate runs objs with the scenario policy and returns the simulator and its log as
// JSON lines.
func simulate(t *testing.T, objs *api.Objects, retryAll bool) (*Simulator, []byte) {
	t.Helper()
	return simulateWith(t, objs, scenarioPolicy, retryAll)
}

// simulateWith is simulate under engine policy cfg, run until no event is left.
func simulateWith(t *testing.T, objs *api.Objects, cfg engine.Config, retryAll bool) (*Simulator, []byte) {
	t.Helper()
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: cfg, Seed: 3, RetryAll: retryAll}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s, encodeLog(t, s.Log())
}

// Parking inadmissible workloads must not change any decision: a parked workload is
// only left out of cycles in which nothing that could help it has changed.
func TestParkingKeepsDecisions(t *testing.T) {
	cases := []struct {
		name string
		cfg  engine.Config
		// fewer: parking must hand the engine fewer pending workloads. With
		// reservations in every cycle of this congested world, placement rejections
		// stay active (their order decides the holds), so only equality is required.
		fewer bool
	}{
		{name: "preemption, no reservations", cfg: engine.Config{Preemption: true, Grace: 2 * time.Minute}, fewer: true},
		{name: "preemption and reservations", cfg: scenarioPolicy},
		{name: "no preemption", cfg: engine.Config{}, fewer: true},
	}
	objs := busyWorld(60)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parked, withParking := simulateWith(t, objs, c.cfg, false)
			polled, withPolling := simulateWith(t, objs, c.cfg, true)
			_, parkedConsidered := parked.sched.Stats()
			_, polledConsidered := polled.sched.Stats()
			if !bytes.Equal(withParking, withPolling) {
				a, b := bytes.Split(withParking, []byte("\n")), bytes.Split(withPolling, []byte("\n"))
				for i := 0; i < len(a) && i < len(b); i++ {
					if !bytes.Equal(a[i], b[i]) {
						t.Fatalf("event logs differ at line %d:\nparked: %s\npolled: %s", i, a[i], b[i])
					}
				}
				t.Fatalf("event logs differ in length: %d vs %d lines", len(a), len(b))
			}
			if parkedConsidered > polledConsidered || (c.fewer && parkedConsidered == polledConsidered) {
				t.Errorf("considered %d pending with parking, %d without: want fewer (or equal: %v)", parkedConsidered, polledConsidered, !c.fewer)
			}
			t.Logf("pending handed to cycles: %d with parking, %d without", parkedConsidered, polledConsidered)
		})
	}
}

// inQueue moves the named jobs to LocalQueue lq, which points at ClusterQueue cq.
func (b *world) inQueue(lq, cq string, jobs ...string) *world {
	b.o.LocalQueues = append(b.o.LocalQueues, api.LocalQueue{Meta: api.Meta{Name: lq, Namespace: "ns"}, ClusterQueue: cq})
	for _, j := range jobs {
		for i := range b.o.Workloads {
			if b.o.Workloads[i].Name == j {
				b.o.Workloads[i].Queue = lq
			}
		}
	}
	return b
}

// strict makes ClusterQueue cq StrictFIFO.
func (b *world) strict(cq string) *world {
	for i := range b.o.ClusterQueues {
		if b.o.ClusterQueues[i].Name == cq {
			b.o.ClusterQueues[i].QueueingStrategy = api.StrictFIFO
		}
	}
	return b
}

// Table test of what parks a workload and what wakes it: each case runs to a time and
// checks the workload's park state there.
func TestParkAndWake(t *testing.T) {
	type tc struct {
		name  string
		objs  *api.Objects
		at    time.Duration
		wl    api.WorkloadID
		want  engine.Park // the park state at `at`
		placd time.Duration
	}
	// a holds all of cq-a's quota for 1h; b (cq-b, its own tree) finishes jobs at 10m.
	twoTrees := func() *world {
		w := MakeWorld().Pool("h", 2, 8, api.CapacityOnDemand).Queue("cq-a", 8, "h").
			Job("a1", 1, 8, 0, time.Hour, 0).Job("a2", 1, 8, time.Minute, time.Hour, 0).
			Job("b1", 1, 1, 0, 10*time.Minute, 0).Job("b2", 1, 1, 2*time.Minute, 10*time.Minute, 0)
		w.o.ClusterQueues = append(w.o.ClusterQueues, w.o.ClusterQueues[0])
		w.o.ClusterQueues[1].Name = "cq-b"
		return w.inQueue("lq-b", "cq-b", "b1", "b2")
	}
	cases := []tc{
		// want: a2 is refused by quota and stays parked while cq-b (another cohort
		// tree) frees quota and GPUs at 10m and 12m.
		{name: "quota-parked ignores other trees", objs: twoTrees().Obj(), at: 15 * time.Minute, wl: "ns/a2", want: engine.ParkedQuota, placd: time.Hour},
		// want: a2 wakes when a1 ends and starts then.
		{name: "quota-parked wakes when its tree frees quota", objs: twoTrees().Obj(), at: time.Hour, wl: "ns/a2", want: engine.NotParked, placd: time.Hour},
		// want: in a StrictFIFO queue the follower f (1 GPU, would fit now) is parked
		// behind the head big (8 GPUs; quota 8, r holds 4 until 30m); big runs 30m-1h30,
		// using the whole quota, so f starts at 1h30.
		{name: "StrictFIFO follower parks behind its head", at: 10 * time.Minute, wl: "ns/f", want: engine.ParkedHead, placd: 90 * time.Minute,
			objs: MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").strict("cq").
				Job("r", 1, 4, 0, 30*time.Minute, 0).Job("big", 1, 8, time.Minute, time.Hour, 0).Job("f", 1, 1, 2*time.Minute, time.Hour, 0).Obj()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestSim(t, c.objs)
			if err := s.RunUntil(c.at); err != nil {
				t.Fatal(err)
			}
			if got := s.sched.Parked(api.WorkloadID(c.wl)); got != c.want {
				t.Errorf("at %s %s parked = %v, want %v", c.at, c.wl, got, c.want)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			if p, ok := firstOf(s.Log(), string(c.wl), EvPlaced); !ok || p.T != Seconds(c.placd) {
				t.Errorf("%s placed at %v (found %v), want %s", c.wl, time.Duration(p.T), ok, c.placd)
			}
		})
	}
}

// A StrictFIFO newcomer with a higher priority sorts before the parked head, so its
// arrival wakes the queue and it is admitted at once.
func TestStrictFIFOArrivalBeforeParkedHead(t *testing.T) {
	objs := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").strict("cq").
		Job("r", 1, 4, 0, 30*time.Minute, 0).Job("big", 1, 8, time.Minute, time.Hour, 0).
		Job("urgent", 1, 2, 5*time.Minute, time.Hour, 0).Priority("urgent", 10).Obj()
	log, _ := runLog(t, objs, 1)
	if p, ok := firstOf(log, "ns/urgent", EvPlaced); !ok || p.T != Seconds(5*time.Minute) {
		t.Errorf("urgent placed at %v (found %v), want at its arrival (5m)", time.Duration(p.T), ok)
	}
}

// A workload that could only preempt once its victim has run its minimum runtime is
// woken for it (no timer: the next cycle after the protection ends sees it), and the
// event log is the one polling every pending workload gives.
func TestMinRuntimeExpiryWakesPreemptor(t *testing.T) {
	w := MakeWorld().Pool("h", 1, 8, api.CapacityOnDemand).Queue("cq", 8, "h").
		Job("low", 1, 8, 0, 2*time.Hour, 0).
		Job("high", 1, 8, 5*time.Minute, time.Hour, 0).Priority("high", 10).
		Job("tick", 1, 1, 40*time.Minute, time.Minute, 0) // an event after the protection ends
	w.o.Workloads[0].MinRuntime = 30 * time.Minute
	objs := w.Obj()
	s, parked := simulate(t, objs, false)
	_, polled := simulate(t, objs, true)
	if !bytes.Equal(parked, polled) {
		t.Fatalf("event logs differ with parking:\n%s\nvs polling:\n%s", parked, polled)
	}
	// want: low is noticed at the first cycle after 30m of runtime (the tick at 40m).
	if p, ok := firstOf(s.Log(), "ns/low", EvPreempted); !ok || p.T != Seconds(40*time.Minute) {
		t.Errorf("low preempted at %v (found %v), want 40m", time.Duration(p.T), ok)
	}
}
