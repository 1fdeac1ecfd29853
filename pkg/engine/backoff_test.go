package engine

import (
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
)

func TestRequeueBackoffWait(t *testing.T) {
	p := RequeuePolicy{BackoffBase: time.Minute, BackoffMax: 10 * time.Minute}
	for n, want := range map[int]time.Duration{1: time.Minute, 2: 2 * time.Minute, 4: 8 * time.Minute, 5: 10 * time.Minute, 80: 10 * time.Minute} {
		if got := p.Wait(n); got != want {
			t.Errorf("wait after failure %d = %s, want %s", n, got, want)
		}
	}
	if got := (RequeuePolicy{BackoffBase: time.Hour}).Wait(200); got <= 0 {
		t.Errorf("an unbounded backoff overflowed: %s", got)
	}
	for _, bad := range []RequeuePolicy{{BackoffBase: -1}, {BackoffMax: -1}, {BackoffBase: time.Hour, BackoffMax: time.Minute}, {BackoffLimit: -1}} {
		if err := (Config{Requeue: bad}).Validate(); err == nil {
			t.Errorf("policy %+v accepted", bad)
		}
	}
}

// A workload evicted by a failure is not tried until its backoff is over, drivers learn
// when that is, and past the limit it is not tried at all.
func TestSchedulerBacksOffAfterFailures(t *testing.T) {
	t0 := gt.Epoch()
	objs, snap := schedWorld(t, "")
	pol := DefaultPolicy()
	pol.Requeue = RequeuePolicy{BackoffBase: time.Minute, BackoffMax: time.Hour, BackoffLimit: 2}
	s, err := Build(objs, pol)
	if err != nil {
		t.Fatal(err)
	}
	quota, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := gpuJob("flaky", "open", 8)
	if err := s.Submit(w, t0, time.Hour); err != nil {
		t.Fatal(err)
	}
	s.Started(w.ID(), t0)
	evicted := t0.Add(10 * time.Minute)
	s.Requeued(w.ID(), evicted, time.Hour)
	s.BackOff(w.ID(), evicted, 2) // second failure: waits two minutes
	if got := s.Parked(w.ID()); got != ParkedBackoff {
		t.Fatalf("parked %v, want ParkedBackoff", got)
	}
	if next, ok := s.NextWake(); !ok || !next.Equal(evicted.Add(2*time.Minute)) {
		t.Fatalf("next wake %s %v, want %s", next, ok, evicted.Add(2*time.Minute))
	}
	if r, ok := s.LastRejection(w.ID()); !ok || r.Reason != plan.ReasonBackoffAfterFailure || r.Evidence == nil ||
		r.Evidence.Backoff == nil || r.Evidence.Backoff.Failures != 2 || !r.Evidence.Backoff.RetryAt.Equal(evicted.Add(2*time.Minute)) {
		t.Errorf("last rejection %+v, want %s after failure 2, retried from %s", r, plan.ReasonBackoffAfterFailure, evicted.Add(2*time.Minute))
	}
	if p := s.Cycle(World{Now: evicted.Add(time.Minute), Cluster: snap, Quota: quota}); len(p.Admissions) != 0 {
		t.Fatalf("admitted during its backoff: %+v", p.Admissions)
	}
	p := s.Cycle(World{Now: evicted.Add(2 * time.Minute), Cluster: snap, Quota: quota})
	if len(p.Admissions) != 1 {
		t.Fatalf("not admitted once the backoff is over: %+v", p)
	}
	s.Committed(p, []api.WorkloadID{w.ID()})
	s.Requeued(w.ID(), evicted.Add(time.Hour), time.Hour)
	s.BackOff(w.ID(), evicted.Add(time.Hour), 3) // past the limit of 2
	if got := s.Parked(w.ID()); got != ParkedLimit {
		t.Fatalf("parked %v, want ParkedLimit", got)
	}
	if _, ok := s.NextWake(); ok {
		t.Error("a workload past the limit still has a wake time")
	}
	if p := s.Cycle(World{Now: evicted.Add(100 * time.Hour), Cluster: snap, Quota: quota}); len(p.Admissions) != 0 {
		t.Fatalf("admitted past the requeue limit: %+v", p.Admissions)
	}
}

// Without a requeue policy a failure requeues at once.
func TestSchedulerNoBackoffByDefault(t *testing.T) {
	t0 := gt.Epoch()
	objs, _ := schedWorld(t, "")
	s, _ := buildWithQuota(t, objs)
	w := gpuJob("a", "open", 1)
	if err := s.Submit(w, t0, 0); err != nil {
		t.Fatal(err)
	}
	s.Started(w.ID(), t0)
	s.Requeued(w.ID(), t0, 0)
	s.BackOff(w.ID(), t0, 5)
	if got := s.Parked(w.ID()); got != NotParked {
		t.Errorf("parked %v without a requeue policy", got)
	}
}

// Only time wakes a workload waiting out its backoff, and nothing but a new submission one
// past the limit: capacity freed by another workload, or a newcomer in its ClusterQueue,
// must not bring it back early (it would be admitted and fail again at once).
func TestBackoffIgnoresClusterEvents(t *testing.T) {
	t0 := gt.Epoch()
	objs, _ := schedWorld(t, "")
	pol := DefaultPolicy()
	pol.Requeue = RequeuePolicy{BackoffBase: time.Hour, BackoffMax: time.Hour, BackoffLimit: 2}
	s, err := Build(objs, pol)
	if err != nil {
		t.Fatal(err)
	}
	waiting, limited, other := gpuJob("waiting", "open", 8), gpuJob("limited", "open", 8), gpuJob("other", "open", 8)
	for _, w := range []*api.Workload{waiting, limited, other} {
		if err := s.Submit(w, t0, time.Hour); err != nil {
			t.Fatal(err)
		}
		s.Started(w.ID(), t0)
	}
	s.Requeued(waiting.ID(), t0.Add(time.Minute), time.Hour)
	s.BackOff(waiting.ID(), t0.Add(time.Minute), 1)
	s.Requeued(limited.ID(), t0.Add(time.Minute), time.Hour)
	s.BackOff(limited.ID(), t0.Add(time.Minute), 3)
	s.Finished(other.ID()) // frees quota and GPUs in their tree
	newcomer := gpuJob("newcomer", "open", 1)
	if err := s.Submit(newcomer, t0.Add(2*time.Minute), time.Hour); err != nil {
		t.Fatal(err)
	}
	// Every event-driven wake goes through wakeSet or wakeQueue (a preemptor woken by a
	// new possible victim, a StrictFIFO queue woken whole): call both on everything.
	cq := s.wls[waiting.ID()].res.ClusterQueue
	if s.parked.byCQ[cq].Len() != 2 {
		t.Fatalf("%d parked in ClusterQueue %q, want the two evicted", s.parked.byCQ[cq].Len(), cq)
	}
	s.wakeQueue(cq)
	s.wakeSet(s.parked.byCQ[cq], nil)
	for _, set := range s.parked.preemptors {
		s.wakeSet(set, nil)
	}
	if got := s.Parked(waiting.ID()); got != ParkedBackoff {
		t.Errorf("waiting: parked %v after a completion and an arrival, want ParkedBackoff", got)
	}
	if got := s.Parked(limited.ID()); got != ParkedLimit {
		t.Errorf("limited: parked %v after a completion and an arrival, want ParkedLimit", got)
	}
}
