package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// checkedSim runs a small world for ten minutes under the invariant checker: "ns/gang"
// (two pods of 4 GPUs) and "ns/one" (one pod of 2 GPUs) run on two 8-GPU nodes, "ns/big"
// (16 GPUs, above the quota) waits. Every check passes on it.
func checkedSim(t *testing.T) (*Simulator, *invariantChecker) {
	t.Helper()
	objs := MakeWorld().Pool("h", 2, 8, api.CapacityOnDemand).Queue("cq", 12, "h").
		Job("gang", 2, 4, 0, time.Hour, 0).Job("one", 1, 2, 0, time.Hour, 0).Job("big", 1, 16, 0, time.Hour, 0).Obj()
	chk := newInvariantChecker()
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: engine.Config{Preemption: true}, Seed: 1}, Observers: []Observer{chk.observer()}})
	if err != nil {
		t.Fatal(err)
	}
	chk.s = s
	if err := s.RunUntil(10 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if chk.err != nil || chk.samples == 0 {
		t.Fatalf("the unchanged world fails its checks (%d samples): %v", chk.samples, chk.err)
	}
	for _, id := range []api.WorkloadID{"ns/gang", "ns/one"} {
		if !holdsPods(s.wls[id].phase) {
			t.Fatalf("%s is %s at 10m, want running", id, s.wls[id].phase)
		}
	}
	return s, chk
}

// wantViolation fails unless err reports a violation containing want.
func wantViolation(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("check says %v, want a violation mentioning %q", err, want)
	}
}

// Every invariant check reports a model broken the way it guards against: the checks
// of TestInvariantsProperty can fail.
func TestInvariantsCheckerCatchesViolations(t *testing.T) {
	t.Run("device held twice", func(t *testing.T) {
		s, chk := checkedSim(t)
		bp := s.snap.Pods()[0]
		i, _ := s.snap.NodeIndex(bp.Node)
		gpus := gpuTable(s.snap.Devices(i))
		if err := chk.holdSlices(gpus, bp); err != nil {
			t.Fatal(err)
		}
		bp.Ref.Index = 7
		wantViolation(t, chk.holdSlices(gpus, bp), "is held by pods")
	})
	t.Run("devices differ from requests", func(t *testing.T) {
		s, _ := checkedSim(t)
		bp := s.snap.Pods()[0]
		bp.Requests = resources.Vector{resources.NvidiaGPU: resources.Amount(len(bp.Devices.Devices) + 1)}
		wantViolation(t, devicesMatchRequests(bp), "for requests")
	})
	t.Run("gang half bound", func(t *testing.T) {
		s, chk := checkedSim(t)
		ref := cluster.PodRef{Workload: "ns/gang", PodSet: "main", Index: 1}
		bp, _ := s.snap.Pod(ref)
		next, err := s.snap.Apply([]cluster.Change{{Op: cluster.OpRemove, Pod: bp}})
		if err != nil {
			t.Fatal(err)
		}
		s.snap = next
		wantViolation(t, chk.checkAll(s.State()), "of its gang's 2 pods bound")
	})
	t.Run("pod on a node under notice", func(t *testing.T) {
		s, chk := checkedSim(t)
		s.cordon[s.wls["ns/one"].bindings[0].Node] = true
		wantViolation(t, chk.checkAll(s.State()), "under spot notice")
	})
	t.Run("quota usage lost", func(t *testing.T) {
		s, chk := checkedSim(t)
		if err := s.quota.Release("ns/one"); err != nil {
			t.Fatal(err)
		}
		wantViolation(t, chk.checkAll(s.State()), "admission holds it admitted=false")
	})
	t.Run("quota above a lowered nominal", func(t *testing.T) {
		s, chk := checkedSim(t)
		lowerQuota(t, s, "cq", 4)
		wantViolation(t, chk.checkAll(s.State()), "above its nominal 4")
		wantViolation(t, chk.checkAdmission("ns/one"), "admitting ns/one")
	})
	t.Run("lowered quota after a quota change: admissions only", func(t *testing.T) {
		s, chk := checkedSim(t)
		lowerQuota(t, s, "cq", 4)
		s.emit(EventRecord{Event: EvQuota, ClusterQueue: "cq"}) // what the simulator logs for a QuotaChange
		if err := chk.checkAll(s.State()); err != nil {
			t.Errorf("running workloads above a quota a change lowered: %v, want accepted", err)
		}
		wantViolation(t, chk.checkAdmission("ns/gang"), "above its nominal 4")
	})
	t.Run("workload dropped from the live list", func(t *testing.T) {
		s, chk := checkedSim(t)
		s.dropLive("ns/big")
		wantViolation(t, chk.checkAll(s.State()), "not on the live list: lost")
	})
	t.Run("admitted twice in the log", func(t *testing.T) {
		s, chk := checkedSim(t)
		chk.tally["ns/one"].admitted++
		wantViolation(t, chk.checkAll(s.State()), "admitted and")
	})
	t.Run("log record unseen", func(t *testing.T) {
		s, chk := checkedSim(t)
		s.log = append(s.log, EventRecord{Event: EvFinished, Workload: "ns/one"})
		wantViolation(t, chk.checkAll(s.State()), "observers saw")
	})
	t.Run("sample counts", func(t *testing.T) {
		s, chk := checkedSim(t)
		cs := s.State()
		cs.Queues[0].Running++
		wantViolation(t, chk.checkAll(cs), "sample counts")
	})
	t.Run("logs differ", func(t *testing.T) {
		a, b := [][]byte{[]byte("x"), []byte("y")}, [][]byte{[]byte("x"), []byte("z")}
		if line, _, _ := firstDifference(a, b); line != 1 {
			t.Errorf("first difference at %d, want 1", line)
		}
		if line, _, _ := firstDifference(a, a[:1]); line != 1 {
			t.Errorf("shorter log: first difference at %d, want 1", line)
		}
		if line, _, _ := firstDifference(a, a); line != -1 {
			t.Errorf("equal logs differ at %d", line)
		}
	})
}

// lowerQuota sets ClusterQueue cq's GPU quota in flavor "h" to n, as a QuotaChange does
// (admitted workloads stay counted), without the quota record the checker listens for.
func lowerQuota(t *testing.T, s *Simulator, cq string, n int64) {
	t.Helper()
	q, err := s.quota.WithResourceGroups(cq, gpuQuota("h", n))
	if err != nil {
		t.Fatal(err)
	}
	s.quota, s.cqs[cq].ResourceGroups = q, gpuQuota("h", n)
}

// restartedSim runs a small world for ten minutes with the controller's records: on two
// 8-GPU nodes, "ns/gang" (two pods of 4 GPUs) and "ns/one" (2 GPUs) run from 0; "ns/big"
// (one pod of 8 GPUs, from 1m) fits the quota but no node, so it holds a reservation for
// when they end. Then the controller restarts with fault, and its first pass runs. It returns
// the checker's first violation.
func restartedSim(t *testing.T, fault restoreFault) error {
	t.Helper()
	objs := MakeWorld().Pool("h", 2, 8, api.CapacityOnDemand).Queue("cq", 24, "h").
		Job("gang", 2, 4, 0, time.Hour, 0).Job("one", 1, 2, 0, time.Hour, 0).Job("big", 1, 8, time.Minute, time.Hour, 0).Obj()
	chk := newInvariantChecker()
	r := &invSim{rec: newRestartRecords(), chk: chk, fault: fault}
	s, err := New(objs, Options{KeepLog: true, Policy: engine.Policy{Config: engine.Config{Reservations: true}, Seed: 1},
		Observers: []Observer{r.rec.observer(), chk.observer()}})
	if err != nil {
		t.Fatal(err)
	}
	r.s, r.rec.s, chk.s = s, s, s
	if err := s.RunUntil(10 * time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.sched.Reservation("ns/big"); !ok || !holdsPods(s.wls["ns/gang"].phase) || !holdsPods(s.wls["ns/one"].phase) {
		t.Fatalf("at 10m: want ns/gang and ns/one running and ns/big reserved:\n%s", encodeLog(t, s.Log()))
	}
	if err := r.restart(); err != nil {
		t.Fatal(err)
	}
	if r.restored.running != 2 || r.restored.pending != 1 || r.restored.reservations != 1 {
		t.Fatalf("restart restored %+v, want 2 running and 1 pending workload and 1 reservation", r.restored)
	}
	return chk.err
}

// The restart checks of TestInvariantsProperty report a restore that loses or
// duplicates a workload or drops a reservation; an intact restore passes them.
func TestRestartChecksCatchBrokenRestores(t *testing.T) {
	if err := restartedSim(t, noFault); err != nil {
		t.Fatalf("an intact restart fails its checks: %v", err)
	}
	for _, tc := range []struct {
		name  string
		fault restoreFault
		want  string
	}{
		{"running workloads not started", faultNotStarted, "as pending"},
		{"a workload not submitted", faultFirstLost, "is lost"},
		{"reservations not restored", faultNoReservations, "reservation was not taken"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantViolation(t, restartedSim(t, tc.fault), tc.want) })
	}
}
