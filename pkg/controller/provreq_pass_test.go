package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// provChecks: ClusterQueue cq of feedObjects requires check "prov" (config "cfg"); onFlavors
// limits it to those flavors.
func provChecks(onFlavors ...string) api.AdmissionChecks {
	return api.AdmissionChecks{
		Checks:         []api.AdmissionCheck{{Meta: api.Meta{Name: "prov"}, ControllerName: api.ProvisioningRequestControllerName, Config: "cfg"}},
		Configs:        []api.ProvisioningRequestConfig{{Meta: api.Meta{Name: "cfg"}, ClassName: api.ProvisioningClassCheckCapacity, Retry: api.DefaultProvisioningRetry()}},
		ByClusterQueue: map[string][]api.ClusterQueueCheck{"cq": {{Name: "prov", OnFlavors: onFlavors}}},
	}
}

// reserved gives t a reservation of its GPUs in flavor h of cq, and check prov in state
// (none when empty).
func reserved(t *tracked, gpus int64, state api.CheckState) *tracked {
	t.obj.Status.QuotaReservation = &v1alpha1.QuotaReservation{ClusterQueue: "cq", ReservedAt: metav1.NewTime(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)),
		PodSetAssignments: []v1alpha1.PodSetAssignment{{Name: t.obj.Spec.PodSets[0].Name, Count: ptr.To(int32(1)),
			Flavors:       map[corev1.ResourceName]string{"nvidia.com/gpu": "h"},
			ResourceUsage: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}}}}
	if state != "" {
		t.obj.Status.AdmissionChecks = []v1alpha1.AdmissionCheckState{{Name: "prov", State: v1alpha1.CheckState(state)}}
	}
	return t
}

func gpuAssignment(flavor string) admission.Assignment {
	return admission.Assignment{ClusterQueue: "cq", PodSets: []admission.PodSetAssignment{{Name: "main", Count: 1,
		Resources: []admission.ResourceAssignment{{Resource: resources.NvidiaGPU, Flavor: flavor, Amount: 1000}}}}}
}

func TestCheckGatePending(t *testing.T) {
	f := newFeeder()
	tests := []struct {
		name   string
		checks api.AdmissionChecks
		t      func() *tracked
		flavor string
		want   bool
	}{
		{"no reservation yet", provChecks(), func() *tracked { return trackedGPUs(t, f, "w", 1, 1) }, "h", true},
		{"reserved, check pending", provChecks(), func() *tracked { return reserved(trackedGPUs(t, f, "w", 1, 1), 1, api.CheckPending) }, "h", true},
		{"reserved, check retried", provChecks(), func() *tracked { return reserved(trackedGPUs(t, f, "w", 1, 1), 1, api.CheckRetry) }, "h", true},
		{"reserved, check ready", provChecks(), func() *tracked { return reserved(trackedGPUs(t, f, "w", 1, 1), 1, api.CheckReady) }, "h", false},
		{"check on another flavor", provChecks("other"), func() *tracked { return trackedGPUs(t, f, "w", 1, 1) }, "h", false},
		{"check on the assigned flavor", provChecks("h"), func() *tracked { return trackedGPUs(t, f, "w", 1, 1) }, "h", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns/w": tc.t()}, checks: tc.checks}
			g := cs.gate()
			if g == nil {
				t.Fatal("no gate for a queue with checks")
			}
			if got := g.Pending(cs.byID["ns/w"].model, gpuAssignment(tc.flavor)); got != tc.want {
				t.Errorf("Pending = %v, want %v", got, tc.want)
			}
		})
	}
	if (&cycleState{}).gate() != nil {
		t.Error("a gate without any check: the engine would ask for nothing")
	}
}

// TestReadChecksChargesReservation: a reservation whose checks run takes its quota and
// counts as started (not pending); once they are all Ready it takes none and is pending,
// for the cycle to place it on quota it assigns anew.
func TestReadChecksChargesReservation(t *testing.T) {
	f := newFeeder()
	for _, tc := range []struct {
		state   api.CheckState
		charged bool
	}{{api.CheckPending, true}, {api.CheckReady, false}} {
		t.Run(string(tc.state), func(t *testing.T) {
			_, quota, _ := feedScheduler(t)
			tr := reserved(trackedGPUs(t, f, "w", 4, 1), 4, tc.state)
			cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns/w": tr}, checks: provChecks()}
			cs.readChecks(tr, quota)
			if _, ok := quota.Admitted("ns/w"); ok != tc.charged {
				t.Errorf("quota charged %v, want %v (warnings %v)", ok, tc.charged, cs.warnings)
			}
			if tr.started() != tc.charged || (len(cs.pending()) == 1) == tc.charged {
				t.Errorf("started %v, pending %d: want started only while the checks run", tr.started(), len(cs.pending()))
			}
		})
	}
}

// TestFeederReservationLifecycle: the scheduler is told a reservation started, and
// requeued once it ends; a Retry's requeueAt and a rejection of the current generation
// hold the requeued workload, as after a restart.
func TestFeederReservationLifecycle(t *testing.T) {
	s, _, _ := feedScheduler(t)
	f := newFeeder()
	tr := reserved(trackedGPUs(t, f, "w", 1, 1), 1, api.CheckPending)
	cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns/w": tr}, checks: provChecks()}
	observe := func() {
		t.Helper()
		cs.readChecks(tr, admissionQuota(t))
		if _, errs := f.observe(s, cs, 1); len(errs) > 0 {
			t.Fatal(errs)
		}
	}
	observe()
	if k := f.known["ns/w"]; k == nil || !k.running {
		t.Fatalf("a reservation is not reported started: %+v", k)
	}
	at := time.Date(2026, 3, 1, 0, 1, 0, 0, time.UTC)
	tr.obj.Status.QuotaReservation = nil
	tr.obj.Status.AdmissionChecks = []v1alpha1.AdmissionCheckState{{Name: "prov", State: v1alpha1.CheckState(api.CheckRetry), LastTransitionTime: metav1.NewTime(at)}}
	tr.obj.Status.RequeueState = &v1alpha1.RequeueState{RequeueAt: ptr.To(metav1.NewTime(at.Add(time.Minute)))}
	observe()
	if f.known["ns/w"].running || s.Parked("ns/w") != engine.ParkedBackoff {
		t.Fatalf("after a Retry: running %v, parked %v; want requeued and backing off", f.known["ns/w"].running, s.Parked("ns/w"))
	}
	if next, ok := s.NextWake(); !ok || !next.Equal(at.Add(time.Minute)) {
		t.Errorf("next wake %v %v, want requeueAt %v", next, ok, at.Add(time.Minute))
	}
}

func admissionQuota(t *testing.T) *admission.Quota {
	t.Helper()
	q, err := admission.NewQuota(feedObjects(), admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestCheckBackOff: what a check recorded on a pending Workload holds it in the
// scheduler after a restart.
func TestCheckBackOff(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	rejected := func(gen int64) func(*v1alpha1.Workload) {
		return func(wl *v1alpha1.Workload) {
			wl.Status.Conditions = []metav1.Condition{{Type: ConditionRequeued, Status: metav1.ConditionFalse, Reason: ReasonCheckRejected,
				ObservedGeneration: gen, LastTransitionTime: metav1.NewTime(at)}}
		}
	}
	retry := func(wl *v1alpha1.Workload) {
		wl.Status.AdmissionChecks = []v1alpha1.AdmissionCheckState{{Name: "prov", State: v1alpha1.CheckState(api.CheckRetry), LastTransitionTime: metav1.NewTime(at)}}
		wl.Status.RequeueState = &v1alpha1.RequeueState{RequeueAt: ptr.To(metav1.NewTime(at.Add(time.Minute)))}
	}
	tests := []struct {
		name string
		set  func(*v1alpha1.Workload)
		held bool
		want engine.Park
	}{
		{"retry until requeueAt", retry, true, engine.ParkedBackoff},
		{"rejected this generation", rejected(1), true, engine.ParkedLimit},
		{"rejected an older generation", rejected(0), false, engine.NotParked},
		{"nothing recorded", func(*v1alpha1.Workload) {}, false, engine.NotParked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := feedScheduler(t)
			tr := trackedGPUs(t, newFeeder(), "w", 1, 1)
			if err := s.Submit(tr.model, at, 0); err != nil {
				t.Fatal(err)
			}
			tc.set(tr.obj)
			if got := checkBackOff(s, "ns/w", tr.obj); got != tc.held || s.Parked("ns/w") != tc.want {
				t.Errorf("held %v, parked %v; want %v, %v", got, s.Parked("ns/w"), tc.held, tc.want)
			}
		})
	}
}

func TestReservationOf(t *testing.T) {
	a := admission.Assignment{ClusterQueue: "cq", PodSets: []admission.PodSetAssignment{{Name: "workers", Count: 2,
		Resources: []admission.ResourceAssignment{
			{Resource: resources.NvidiaGPU, Flavor: "h100", Amount: 16},
			{Resource: "cpu", Flavor: "cpu-default", Amount: 4000},
		}}}}
	now := time.Date(2026, 3, 1, 0, 0, 0, 500, time.UTC)
	res := reservationOf(a, now)
	if res.ClusterQueue != "cq" || !res.ReservedAt.Time.Equal(now.Truncate(time.Second)) || len(res.PodSetAssignments) != 1 {
		t.Fatalf("reservation %+v", res)
	}
	ps := res.PodSetAssignments[0]
	if *ps.Count != 2 || ps.Flavors["nvidia.com/gpu"] != "h100" || ps.ResourceUsage.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 16 {
		t.Errorf("pod set %+v", ps)
	}
	// Read back, it charges what the assignment charged (restart safety).
	back := assignmentFrom("ns/w", res.ClusterQueue, res.PodSetAssignments)
	got := map[admission.FlavorResource]resources.Amount{}
	for _, u := range back.Usage {
		got[u.FlavorResource] = u.Amount
	}
	if got[admission.FlavorResource{Flavor: "h100", Resource: resources.NvidiaGPU}] != 16 || got[admission.FlavorResource{Flavor: "cpu-default", Resource: "cpu"}] != 4000 {
		t.Errorf("usage read back %v", back.Usage)
	}
	flavors := map[string]api.ResourceFlavor{"h100": {Meta: api.Meta{Name: "h100"}, NodeLabels: map[string]string{"pool": "h100"}}, "cpu-default": {Meta: api.Meta{Name: "cpu-default"}}}
	counts, by := reservedPodSets(res, flavors)
	if counts["workers"] != 2 || by["workers"].Name != "h100" {
		t.Errorf("counts %v, flavor %q: want 2 and the flavor with node labels", counts, by["workers"].Name)
	}
}

// TestFeederHoldsAfterReadyReservation: a reservation whose checks were all Ready is
// pending (the cycle places it); when a request's booking then expires its Retry holds
// the workload although it never counted as started.
func TestFeederHoldsAfterReadyReservation(t *testing.T) {
	s, _, _ := feedScheduler(t)
	f := newFeeder()
	tr := reserved(trackedGPUs(t, f, "w", 1, 1), 1, api.CheckReady)
	cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns/w": tr}, checks: provChecks()}
	cs.readChecks(tr, admissionQuota(t))
	if _, errs := f.observe(s, cs, 1); len(errs) > 0 || f.known["ns/w"].running {
		t.Fatalf("a reservation with its checks Ready counts as started (errs %v)", errs)
	}
	at := time.Date(2026, 3, 1, 0, 1, 0, 0, time.UTC)
	tr.obj.Status.QuotaReservation, tr.checksDone = nil, false
	tr.obj.Status.AdmissionChecks = []v1alpha1.AdmissionCheckState{{Name: "prov", State: v1alpha1.CheckState(api.CheckRetry), LastTransitionTime: metav1.NewTime(at)}}
	tr.obj.Status.RequeueState = &v1alpha1.RequeueState{RequeueAt: ptr.To(metav1.NewTime(at.Add(time.Minute)))}
	changed, errs := f.observe(s, cs, 1)
	if len(errs) > 0 || !changed || s.Parked("ns/w") != engine.ParkedBackoff {
		t.Fatalf("changed %v, parked %v (errs %v): want the Retry's backoff", changed, s.Parked("ns/w"), errs)
	}
	if changed, _ := f.observe(s, cs, 1); changed {
		t.Error("the same hold applied twice")
	}
}
