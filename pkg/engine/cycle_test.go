package engine

import (
	"reflect"
	"strings"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

func mustEngine(t *testing.T, cfg Config, p Placer) *Engine {
	t.Helper()
	e, err := New(cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func outcome(p plan.Plan, id string) string {
	for _, a := range p.Admissions {
		if string(a.Workload) == id {
			return "admitted"
		}
	}
	for _, r := range p.Reservations {
		if string(r.Workload) == id {
			return "reserved"
		}
	}
	for _, r := range p.Rejections {
		if string(r.Workload) == id {
			return string(r.Layer) + ":" + string(r.Reason)
		}
	}
	return "none"
}

func TestCycleOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		nodes   int   // nodes of 4 CPUs
		limit   int64 // ClusterQueue quota in CPUs
		strict  bool
		pending []*api.Workload
		// want maps workload ID to its outcome: "admitted", "reserved" or "layer:reason".
		want map[string]string
	}{
		{
			name: "fits quota and nodes", nodes: 2, limit: 8,
			pending: []*api.Workload{gt.MakeWorkload("ns", "a").CPU(2).Pods(2).Obj()},
			want:    map[string]string{"ns/a": "admitted"},
		},
		{
			name: "quota fits, cluster does not: reported as such", nodes: 1, limit: 100,
			pending: []*api.Workload{gt.MakeWorkload("ns", "big").CPU(4).Pods(2).Obj()},
			want:    map[string]string{"ns/big": "placement:" + string(plan.ReasonQuotaFitsClusterDoesNot)},
		},
		{
			name: "quota does not fit", nodes: 4, limit: 2,
			pending: []*api.Workload{gt.MakeWorkload("ns", "a").CPU(3).Obj()},
			want:    map[string]string{"ns/a": "admission:WaitingForQuota"},
		},
		{
			name: "priority first: the high one takes the last room", nodes: 1, limit: 100,
			pending: []*api.Workload{gt.MakeWorkload("ns", "low").CPU(4).Obj(), gt.MakeWorkload("ns", "high").CPU(4).Priority(10).Created(time.Hour).Obj()},
			want:    map[string]string{"ns/high": "admitted", "ns/low": "placement:" + string(plan.ReasonQuotaFitsClusterDoesNot)},
		},
		{
			name: "best effort FIFO: a later small one goes past a big head", nodes: 1, limit: 100,
			pending: []*api.Workload{gt.MakeWorkload("ns", "big").CPU(8).Obj(), gt.MakeWorkload("ns", "small").CPU(1).Created(time.Minute).Obj()},
			want:    map[string]string{"ns/big": "placement:" + string(plan.ReasonQuotaFitsClusterDoesNot), "ns/small": "admitted"},
		},
		{
			name: "strict FIFO: the head blocks its queue", nodes: 1, limit: 100, strict: true,
			pending: []*api.Workload{gt.MakeWorkload("ns", "big").CPU(8).Obj(), gt.MakeWorkload("ns", "small").CPU(1).Created(time.Minute).Obj()},
			want:    map[string]string{"ns/big": "placement:" + string(plan.ReasonQuotaFitsClusterDoesNot), "ns/small": "admission:" + string(plan.ReasonBlockedByHead)},
		},
		{
			name: "quota is charged within the cycle", nodes: 4, limit: 4,
			pending: []*api.Workload{gt.MakeWorkload("ns", "a").CPU(3).Obj(), gt.MakeWorkload("ns", "b").CPU(3).Created(time.Minute).Obj()},
			want:    map[string]string{"ns/a": "admitted", "ns/b": "admission:WaitingForQuota"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := newFakeQuota()
			q.limit["cq"] = resourcesCPU(tc.limit)
			in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(tc.nodes, 4), Quota: q}
			for _, w := range tc.pending {
				p := pending(w, "cq")
				if tc.strict {
					p.Strategy = api.StrictFIFO
				}
				in.Pending = append(in.Pending, p)
			}
			got := mustEngine(t, Config{}, &fakePlacer{}).Cycle(in)
			if err := got.Validate(); err != nil {
				t.Fatalf("plan invalid: %v", err)
			}
			for id, want := range tc.want {
				if o := outcome(got, id); o != want {
					t.Errorf("%s: got %s, want %s", id, o, want)
				}
			}
		})
	}
}

func TestNoFitDetailsAndPositions(t *testing.T) {
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(1, 4), Quota: q, Pending: []Pending{
		pending(gt.MakeWorkload("ns", "a").CPU(8).Obj(), "cq"),
		pending(gt.MakeWorkload("ns", "b").CPU(8).Created(time.Minute).Obj(), "cq"),
	}}
	p := mustEngine(t, Config{}, &fakePlacer{}).Cycle(in)
	if len(p.Rejections) != 2 {
		t.Fatalf("rejections = %+v, want 2", p.Rejections)
	}
	r := p.Rejections[1]
	if r.Workload != "ns/b" || r.Position != 2 {
		t.Errorf("second rejection = %s at %d, want ns/b at position 2", r.Workload, r.Position)
	}
	if lines := r.Explain(); len(lines) < 2 || !strings.Contains(lines[1], "0 of 1 nodes") {
		t.Errorf("explanation = %q, want placement's per-node counts", lines)
	}
	// a and b are one equivalence class: b gets a's rejection, evidence shared.
	if r.Evidence == nil || r.Evidence != p.Rejections[0].Evidence {
		t.Errorf("evidence %p and %p: want the class's one evidence", p.Rejections[0].Evidence, r.Evidence)
	}
}

func TestPreemptionForNodes(t *testing.T) {
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	hi := gt.MakeWorkload("ns", "hi").CPU(4).Priority(10).Obj()
	running := []placement.Running{{ID: "ns/lo", Priority: 0}}
	fp := &fakePlacer{victims: map[api.WorkloadID][]api.WorkloadID{"ns/hi": {"ns/lo"}}}
	e := mustEngine(t, Config{Preemption: true, Grace: 2 * time.Minute}, fp)
	base := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(0, 4), Quota: q, Pending: []Pending{pending(hi, "cq")}, Running: running}

	p := e.Cycle(base)
	if len(p.Notices) != 1 || p.Notices[0].Workload != "ns/lo" || p.Notices[0].By != "ns/hi" || p.Notices[0].Grace != 2*time.Minute {
		t.Fatalf("notices = %+v, want ns/lo noticed for ns/hi with 2m grace", p.Notices)
	}
	if o := outcome(p, "ns/hi"); o != "placement:"+string(plan.ReasonWaitingForPreemption) {
		t.Errorf("preemptor outcome = %s, want waiting for preemption", o)
	}

	// Next cycle, the victim is leaving: no second notice, the preemptor keeps waiting.
	next := base
	next.InFlight = map[api.WorkloadID]bool{"ns/lo": true}
	next.Nominated = map[api.WorkloadID][]api.WorkloadID{"ns/hi": {"ns/lo"}}
	p2 := e.Cycle(next)
	if len(p2.Notices) != 0 {
		t.Errorf("second cycle notices = %+v, want none while the victim leaves", p2.Notices)
	}

	// A workload never preempts its own preemptor: no cycle.
	cyc := base
	cyc.PreemptedBy = map[api.WorkloadID]api.WorkloadID{"ns/hi": "ns/lo"}
	p3 := e.Cycle(cyc)
	if len(p3.Notices) != 0 {
		t.Errorf("notices = %+v, want none: ns/lo preempted ns/hi before", p3.Notices)
	}
}

func TestPreemptionForQuota(t *testing.T) {
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(4)
	q.used["cq"] = resourcesCPU(4)
	q.victims["ns/hi"] = []api.WorkloadID{"ns/lo"}
	hi := gt.MakeWorkload("ns", "hi").CPU(4).Priority(10).Obj()
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(2, 4), Quota: q, Pending: []Pending{pending(hi, "cq")}}
	p := mustEngine(t, Config{Preemption: true}, &fakePlacer{}).Cycle(in)
	if len(p.Notices) != 1 || p.Notices[0].Layer != plan.LayerAdmission {
		t.Fatalf("notices = %+v, want one admission-layer notice", p.Notices)
	}
	// Without preemption the same workload just waits for quota.
	q2 := newFakeQuota()
	q2.limit["cq"], q2.used["cq"] = resourcesCPU(4), resourcesCPU(4)
	q2.victims["ns/hi"] = []api.WorkloadID{"ns/lo"}
	in.Quota = q2
	p = mustEngine(t, Config{}, &fakePlacer{}).Cycle(in)
	if len(p.Notices) != 0 || outcome(p, "ns/hi") != "admission:WaitingForQuota" {
		t.Errorf("without preemption: notices %+v, outcome %s", p.Notices, outcome(p, "ns/hi"))
	}
}

func TestReservationAndBackfill(t *testing.T) {
	q := newFakeQuota()
	q.limit["cq"] = resourcesCPU(100)
	big := gt.MakeWorkload("ns", "big").CPU(8).Priority(5).Obj()
	long := gt.MakeWorkload("ns", "long").CPU(1).Created(time.Minute).Obj()
	short := gt.MakeWorkload("ns", "short").CPU(1).Created(2 * time.Minute).Obj()
	fp := &fakePlacer{eta: map[api.WorkloadID]time.Duration{"ns/big": time.Hour}}
	shortP := pending(short, "cq")
	shortP.Runtime = 10 * time.Minute
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(1, 4), Quota: q,
		Pending: []Pending{pending(big, "cq"), pending(long, "cq"), shortP}}
	p := mustEngine(t, Config{Reservations: true}, fp).Cycle(in)
	tests := map[string]string{
		"ns/big":   "reserved",
		"ns/long":  "placement:" + string(plan.ReasonBlockedByReservation), // unknown runtime may not use n0
		"ns/short": "admitted",                                             // ends before the ETA: backfilled
	}
	for id, want := range tests {
		if o := outcome(p, id); o != want {
			t.Errorf("%s: %s, want %s", id, o, want)
		}
	}
	if eta := p.Reservations[0].ETA; !eta.Equal(gt.Epoch().Add(time.Hour)) {
		t.Errorf("ETA = %s, want now+1h", eta)
	}
}

func TestCycleDeterministic(t *testing.T) {
	run := func() plan.Plan {
		q := newFakeQuota()
		q.limit["a"], q.limit["b"] = resourcesCPU(6), resourcesCPU(6)
		q.share["a"], q.share["b"] = 100, 50
		var ps []Pending
		for i, name := range []string{"w1", "w2", "w3", "w4", "w5", "w6"} {
			cq := "a"
			if i%2 == 1 {
				cq = "b"
			}
			ps = append(ps, pending(gt.MakeWorkload("ns", name).CPU(2).Created(time.Duration(6-i)*time.Second).Obj(), cq))
		}
		return mustEngine(t, Config{}, &fakePlacer{}).Cycle(Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(2, 4), Quota: q, Pending: ps})
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two runs differ:\n%+v\n%+v", a, b)
	}
	// Queue b has the lower share, so its oldest workload is admitted first.
	if a.Admissions[0].Workload != "ns/w6" {
		t.Errorf("first admission = %s, want ns/w6 (lower share, oldest)", a.Admissions[0].Workload)
	}
}

func TestConfigValidate(t *testing.T) {
	if _, err := New(Config{Grace: -time.Second}, &fakePlacer{}); err == nil || !strings.Contains(err.Error(), "grace") {
		t.Errorf("negative grace: err = %v", err)
	}
	if _, err := New(Config{}, nil); err == nil {
		t.Error("nil placer accepted")
	}
}

func TestHoldAndDrainEvictsRunning(t *testing.T) {
	in := Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(1, 4), Quota: newFakeQuota(),
		Running:  []placement.Running{{ID: "ns/a", Queue: "held"}, {ID: "ns/b", Queue: "open"}, {ID: "ns/c", Queue: "held"}},
		InFlight: map[api.WorkloadID]bool{"ns/c": true},
		Draining: map[api.WorkloadID]string{"ns/a": "held drains", "ns/c": "held drains"}}
	p := mustEngine(t, Config{}, &fakePlacer{}).Cycle(in)
	if len(p.Evictions) != 1 || p.Evictions[0].Workload != "ns/a" {
		t.Fatalf("evictions = %+v, want only ns/a (ns/b's queue is open, ns/c already leaving)", p.Evictions)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
}

// A victim requeued in the same instant its preemptor queued (a driver stamps whole
// seconds) is older, yet the preemptor is tried first: the room was freed for it. Were
// the victim tried first it would take the room back, and the preemptor, which preempts
// a workload at most once, would wait until the victim ended.
func TestPreemptorBeforeItsRequeuedVictim(t *testing.T) {
	q := newFakeQuota()
	q.limit["cq-a"], q.limit["cq-b"] = resourcesCPU(8), resourcesCPU(8)
	victim := gt.MakeWorkload("ns", "borrower").CPU(4).Priority(10).Obj()
	owner := gt.MakeWorkload("ns", "owner").CPU(4).Obj()
	owner.Created = gt.Epoch().Add(time.Second)
	in := Input{Cycle: 3, Now: gt.Epoch().Add(time.Second), Cluster: snapshotOf(1, 4), Quota: q,
		Pending:     []Pending{pending(victim, "cq-a"), pending(owner, "cq-b")},
		Nominated:   map[api.WorkloadID][]api.WorkloadID{"ns/owner": {"ns/borrower"}},
		PreemptedBy: map[api.WorkloadID]api.WorkloadID{"ns/borrower": "ns/owner"}}
	in.Pending[0].QueuedAt = owner.Created // requeued in the second the owner queued
	in.Pending[1].QueuedAt = owner.Created
	p := mustEngine(t, Config{Preemption: true}, &fakePlacer{}).Cycle(in)
	if got := outcome(p, "ns/owner"); got != "admitted" {
		t.Errorf("preemptor: %s, want admitted", got)
	}
	if got := outcome(p, "ns/borrower"); got == "admitted" {
		t.Errorf("victim admitted ahead of its preemptor")
	}
	// Without the nomination the older, higher-priority workload goes first.
	in.Nominated, in.PreemptedBy = nil, nil
	p = mustEngine(t, Config{Preemption: true}, &fakePlacer{}).Cycle(in)
	if got := outcome(p, "ns/borrower"); got != "admitted" {
		t.Errorf("without a nomination: borrower %s, want admitted", got)
	}
}
