package engine

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A harness for the cases of Kueue's scheduler tests that a whole scheduling cycle
// decides (kubernetes-sigs/kueue pkg/scheduler/scheduler_test.go TestSchedule and
// scheduler_fs_test.go TestScheduleForFairSharing): the order heads are tried in, the
// usage earlier admissions of the cycle leave to later ones, fair-sharing order. The
// quota layer is the real one; placement is the fake first-fit placer on one node large
// enough for every case, so only quota decides.

// kueueRunning is a workload holding quota when the case starts, with the flavors Kueue's
// case gives it.
type kueueRunning struct {
	name, cq string
	prio     int32
	use      []admission.FlavorAmount
}

func running(name, cq string, prio int32, use ...admission.FlavorAmount) kueueRunning {
	return kueueRunning{name: name, cq: cq, prio: prio, use: use}
}

// amount is q of resource r in flavor f ("2", "3Gi").
func amount(f string, r resources.Name, q string) admission.FlavorAmount {
	return admission.FlavorAmount{FlavorResource: admission.FlavorResource{Flavor: f, Resource: r}, Amount: resources.MustParse(r, q)}
}

// kueueWaiting is a pending workload of ClusterQueue cq.
type kueueWaiting struct {
	wl *gt.WorkloadWrapper
	cq string
}

func waiting(wl *gt.WorkloadWrapper, cq string) kueueWaiting { return kueueWaiting{wl: wl, cq: cq} }

// kueueCycleCase is one Kueue case as one Gantry cycle.
type kueueCycleCase struct {
	name    string // the Kueue case name, verbatim
	flavors []string
	cqs     []api.ClusterQueue
	cohorts []api.Cohort
	fair    bool // Kueue's enableFairSharing
	running []kueueRunning
	pending []kueueWaiting
	// wantAdmitted maps each workload admitted in the cycle to its flavors
	// ("main:cpu@on-demand"); wantPreempted are the victims noticed.
	wantAdmitted  map[string]string
	wantPreempted []string
	// differs, when set, says in one line why Gantry deliberately decides otherwise than
	// Kueue; the want fields are then Gantry's decision (docs/admission.md lists it).
	differs string
}

func runKueueCycleCases(t *testing.T, cases []kueueCycleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runKueueCycleCase(t, tc)
			want := kueueCycleResult{admitted: tc.wantAdmitted, preempted: append([]string(nil), tc.wantPreempted...)}
			if want.admitted == nil {
				want.admitted = map[string]string{}
			}
			sort.Strings(want.preempted)
			if msg := got.diff(want); msg != "" {
				if tc.differs != "" {
					msg += " (Gantry differs on purpose: " + tc.differs + ")"
				}
				t.Fatal(msg)
			}
		})
	}
}

// kueueCycleResult is what a cycle decided, by workload name.
type kueueCycleResult struct {
	admitted  map[string]string
	preempted []string
}

func (r kueueCycleResult) diff(want kueueCycleResult) string {
	if maps.Equal(r.admitted, want.admitted) && slices.Equal(r.preempted, want.preempted) {
		return ""
	}
	return "got admitted " + fmtFlavors(r.admitted) + " preempted [" + strings.Join(r.preempted, " ") +
		"]; want admitted " + fmtFlavors(want.admitted) + " preempted [" + strings.Join(want.preempted, " ") + "]"
}

func fmtFlavors(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, " ") + "]"
}

// runKueueCycleCase builds the quota from the case, records the running workloads in
// order (a later one counts as more recently admitted) and runs one cycle.
func runKueueCycleCase(t *testing.T, tc kueueCycleCase) kueueCycleResult {
	t.Helper()
	return runKueueCycleCaseWith(t, tc, Config{Preemption: true, Grace: time.Minute, HeadOrder: HeadOrderKueue})
}

// runKueueCycleCaseWith is runKueueCycleCase under cfg.
func runKueueCycleCaseWith(t *testing.T, tc kueueCycleCase, cfg Config) kueueCycleResult {
	t.Helper()
	names := tc.flavors
	if names == nil {
		names = []string{"default", "on-demand", "spot", "model-a"}
	}
	var flavors []api.ResourceFlavor
	for _, n := range names {
		flavors = append(flavors, gt.MakeFlavor(n).Obj())
	}
	objs := gt.MakeObjects().Flavors(flavors...).ClusterQueues(tc.cqs...).Cohorts(tc.cohorts...).Obj()
	q, err := admission.NewQuota(objs, admission.Options{FairSharing: admission.FairSharingConfig{Enabled: tc.fair}})
	if err != nil {
		t.Fatalf("NewQuota: %v", err)
	}
	for _, r := range tc.running {
		w := gt.MakeWorkload("ns", r.name).Priority(r.prio).Obj()
		a := admission.Assignment{Workload: w.ID(), ClusterQueue: r.cq, Mode: admission.Fit, Usage: r.use}
		if err := q.Admit(w, a); err != nil {
			t.Fatalf("running %s: %v", r.name, err)
		}
	}
	pending := make([]Pending, 0, len(tc.pending))
	for _, p := range tc.pending {
		w := p.wl.Obj()
		pending = append(pending, Pending{Workload: w, ClusterQueue: p.cq, Strategy: api.BestEffortFIFO, QueuedAt: w.Created})
	}
	e := mustEngine(t, cfg, quotaOnlyPlacer{})
	out := e.Cycle(Input{Cycle: 1, Now: gt.Epoch(), Cluster: snapshotOf(1, 1), Quota: NewAdmissionQuota(q, nil), Pending: pending})
	return resultOf(out)
}

func resultOf(p plan.Plan) kueueCycleResult {
	r := kueueCycleResult{admitted: map[string]string{}}
	for _, a := range p.Admissions {
		r.admitted[nameOf(a.Workload)] = podSetFlavors(a.PodSets)
	}
	for _, n := range p.Notices {
		r.preempted = append(r.preempted, nameOf(n.Workload))
	}
	sort.Strings(r.preempted)
	return r
}

// nameOf is the workload's name, with its namespace unless that is "ns" (Kueue's cases
// reuse a name across namespaces).
func nameOf(id api.WorkloadID) string {
	return strings.TrimPrefix(string(id), "ns/")
}

// podSetFlavors renders "one:cpu@on-demand,example.com/gpu@model-a two:cpu@spot".
func podSetFlavors(pss []plan.PodSetAssignment) string {
	var parts []string
	for _, ps := range pss {
		rs := make([]string, 0, len(ps.Flavors))
		for r, f := range ps.Flavors {
			rs = append(rs, string(r)+"@"+f)
		}
		sort.Strings(rs)
		parts = append(parts, ps.Name+":"+strings.Join(rs, ","))
	}
	return strings.Join(parts, " ")
}

// quotaOnlyPlacer places every gang on node n0 without looking at the nodes, so that
// only quota decides (Kueue's scheduler tests have no nodes).
type quotaOnlyPlacer struct{}

func (quotaOnlyPlacer) Place(c PlaceCall) PlaceResult {
	var bs []plan.Binding
	for _, ps := range c.Workload.PodSets {
		for k := 0; k < int(ps.Count); k++ {
			bs = append(bs, plan.Binding{Workload: c.Workload.ID(), PodSet: ps.Name, Index: k, Node: "n0", Requests: ps.Requests})
		}
	}
	return PlaceResult{OK: true, Bindings: bs}
}

func (quotaOnlyPlacer) Preempt(PlaceCall) PreemptResult { return PreemptResult{} }

func (quotaOnlyPlacer) Reserve(PlaceCall) (plan.Reservation, bool) { return plan.Reservation{}, false }

// Kueue's head order is a choice (Config.HeadOrder): the cases it decides differ from
// the default priority order, so each of them must decide otherwise without it.
func TestKueueHeadOrderIsOptIn(t *testing.T) {
	names := map[string]bool{
		"in a hierarchical cohort, workload borrowing less is scheduled first": true,
		"fair sharing schedule workload with lowest drf after admission":       true,
		// the in-cycle quota holds (holds.go) come with Kueue's cycle only
		"multiple preemptions skip preemption when shared limited resource":                                true,
		"capacity blocked when lending clusterqueue not guaranteed to reclaim (ReclaimWithinCohort=Never)": true,
	}
	found := 0
	for _, tc := range append(kueueScheduleCycleCases(), kueueFairSharingCases()...) {
		if !names[tc.name] {
			continue
		}
		found++
		kueue := runKueueCycleCase(t, tc)
		plain := runKueueCycleCaseWith(t, tc, Config{Preemption: true, Grace: time.Minute})
		if plain.diff(kueue) == "" {
			t.Errorf("%s: the priority order decides as Kueue's head order does (%s); the case does not show the option", tc.name, fmtFlavors(kueue.admitted))
		}
	}
	if found != len(names) {
		t.Fatalf("found %d of the %d cases", found, len(names))
	}
}

// An unknown head order is refused with the field's name.
func TestHeadOrderValidated(t *testing.T) {
	err := Config{HeadOrder: "fastest"}.Validate()
	if err == nil || !strings.Contains(err.Error(), `headOrder "fastest"`) {
		t.Fatalf("Validate() = %v, want an error naming headOrder", err)
	}
}
