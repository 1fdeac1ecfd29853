package controller

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/prometheus/client_golang/prometheus"
)

// newTestMetrics registers the controller's series on a fresh registry.
func newTestMetrics(t *testing.T) (*Metrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// sampleOf is the value of the series name{labels} (every label given, no other), and
// whether it exists.
func sampleOf(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range s.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if !sameLabels(got, labels) {
				continue
			}
			switch {
			case s.Gauge != nil:
				return s.GetGauge().GetValue(), true
			case s.Counter != nil:
				return s.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// fakeDecisions answers for the scheduler in the pending-workload tests.
type fakeDecisions struct {
	reserved map[api.WorkloadID]bool
	rejected map[api.WorkloadID]plan.Rejection
	parked   map[api.WorkloadID]engine.Park
}

func (f fakeDecisions) Reservation(id api.WorkloadID) (plan.Reservation, bool) {
	return plan.Reservation{Workload: id}, f.reserved[id]
}

func (f fakeDecisions) LastRejection(id api.WorkloadID) (plan.Rejection, bool) {
	r, ok := f.rejected[id]
	return r, ok
}

func (f fakeDecisions) Parked(id api.WorkloadID) engine.Park { return f.parked[id] }

// metricsQuota is two ClusterQueues of one cohort: a (4 GPUs, borrowing limit 2, held
// by a stop policy) and b (8 GPUs, no limits).
func metricsQuota(t *testing.T) *admission.Quota {
	t.Helper()
	objs := gt.MakeObjects().Flavors(gt.MakeFlavor("h100").Obj()).Cohorts(gt.MakeCohort("research").Obj()).ClusterQueues(
		gt.MakeClusterQueue("a").Cohort("research").Stop(api.StopHold).
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(resources.NvidiaGPU, "4").Borrow("2").Obj()).Obj(),
		gt.MakeClusterQueue("b").Cohort("research").
			ResourceGroup(gt.MakeFlavorQuotas("h100").Resource(resources.NvidiaGPU, "8").Obj()).Obj(),
	).Obj()
	q, err := admission.NewQuota(objs, admission.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestPendingMetrics: every pending workload counts once by Kueue's status (parked:
// inadmissible; tried next cycle or behind a reservation: active) and once by its
// latest decision; every known queue reports both statuses, 0 included.
func TestPendingMetrics(t *testing.T) {
	m, reg := newTestMetrics(t)
	w := func(name string) *api.Workload { return gt.MakeWorkload("ns-a", name).GPUs(1).Obj() }
	quotaShort, reserved, fresh := w("quota-short"), w("reserved"), w("fresh")
	pending := []engine.Pending{{Workload: quotaShort, ClusterQueue: "a"}, {Workload: reserved, ClusterQueue: "a"}, {Workload: fresh, ClusterQueue: "a"}}
	d := fakeDecisions{
		reserved: map[api.WorkloadID]bool{reserved.ID(): true},
		rejected: map[api.WorkloadID]plan.Rejection{quotaShort.ID(): {ClusterQueue: "a", Layer: plan.LayerAdmission, Reason: plan.ReasonWaitingForQuota}},
		parked:   map[api.WorkloadID]engine.Park{quotaShort.ID(): engine.ParkedQuota, reserved.ID(): engine.ParkedReserved},
	}
	m.observePending(metricsQuota(t), pending, d)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"gantry_pending_workloads", map[string]string{"cluster_queue": "a", "status": "active"}, 2},
		{"gantry_pending_workloads", map[string]string{"cluster_queue": "a", "status": "inadmissible"}, 1},
		{"gantry_pending_workloads", map[string]string{"cluster_queue": "b", "status": "active"}, 0},
		{"gantry_pending_workloads", map[string]string{"cluster_queue": "b", "status": "inadmissible"}, 0},
		{"gantry_pending_workloads_by_reason", map[string]string{"cluster_queue": "a", "layer": "admission", "reason": string(plan.ReasonWaitingForQuota)}, 1},
		{"gantry_pending_workloads_by_reason", map[string]string{"cluster_queue": "a", "layer": "placement", "reason": ReasonReserved}, 1},
	} {
		if got, ok := sampleOf(t, reg, tc.name, tc.labels); !ok || got != tc.want {
			t.Errorf("%s%v = %v (present %t), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
}

// TestQuotaMetrics: quota cells carry the cohort as Kueue's do; limits are reported only
// where set; a queue held by a stop policy is "pending".
func TestQuotaMetrics(t *testing.T) {
	m, reg := newTestMetrics(t)
	m.observeQuota(metricsQuota(t))
	cell := func(cq string) map[string]string {
		return map[string]string{"cohort": "research", "cluster_queue": cq, "flavor": "h100", "resource": "nvidia.com/gpu"}
	}
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		want    float64
		present bool
	}{
		{"gantry_cluster_queue_nominal_quota", cell("a"), 4, true}, // GPUs, as Kueue reports them
		{"gantry_cluster_queue_nominal_quota", cell("b"), 8, true},
		{"gantry_cluster_queue_borrowing_limit", cell("a"), 2, true},
		{"gantry_cluster_queue_borrowing_limit", cell("b"), 0, false},
		{"gantry_cluster_queue_lending_limit", cell("a"), 0, false},
		{"gantry_cluster_queue_resource_usage", cell("b"), 0, true},
		{"gantry_cluster_queue_status", map[string]string{"cluster_queue": "a", "status": "pending"}, 1, true},
		{"gantry_cluster_queue_status", map[string]string{"cluster_queue": "a", "status": "active"}, 0, true},
		{"gantry_cluster_queue_status", map[string]string{"cluster_queue": "b", "status": "active"}, 1, true},
	} {
		got, ok := sampleOf(t, reg, tc.name, tc.labels)
		if ok != tc.present || got != tc.want {
			t.Errorf("%s%v = %v (present %t), want %v (present %t)", tc.name, tc.labels, got, ok, tc.want, tc.present)
		}
	}
}

// TestPreemptedMetrics: a notice counts under the preemptor's ClusterQueue, with
// InClusterQueue when the victim ran in that queue and InCohort otherwise; a notice
// without a preemptor (a cluster cause) is no preemption.
func TestPreemptedMetrics(t *testing.T) {
	m, reg := newTestMetrics(t)
	preemptorObj := k8s.MakeWorkload("ns-a", "big").Obj()
	cs := &cycleState{byID: map[api.WorkloadID]*tracked{"ns-a/big": {obj: &preemptorObj, cq: "a"}}}
	victim := func(cq string) *tracked {
		obj := k8s.MakeWorkload("ns", "v-"+cq).Admitted(cq).Obj()
		return &tracked{obj: &obj, cq: cq}
	}
	m.preempted(cs, victim("a"), plan.Notice{By: "ns-a/big", Layer: plan.LayerAdmission})
	m.preempted(cs, victim("b"), plan.Notice{By: "ns-a/big", Layer: plan.LayerAdmission})
	m.preempted(cs, victim("b"), plan.Notice{By: "ns-a/big", Layer: plan.LayerPlacement})
	m.preempted(cs, victim("b"), plan.Notice{Layer: plan.LayerCluster})
	for _, tc := range []struct {
		reason, layer string
		want          float64
	}{
		{"InClusterQueue", "admission", 1},
		{"InCohort", "admission", 1},
		{"InCohort", "placement", 1},
	} {
		labels := map[string]string{"preempting_cluster_queue": "a", "reason": tc.reason, "layer": tc.layer}
		if got, ok := sampleOf(t, reg, "gantry_preempted_workloads_total", labels); !ok || got != tc.want {
			t.Errorf("gantry_preempted_workloads_total%v = %v (present %t), want %v", labels, got, ok, tc.want)
		}
	}
	if _, ok := sampleOf(t, reg, "gantry_preempted_workloads_total", map[string]string{"preempting_cluster_queue": "", "reason": "InCohort", "layer": "cluster"}); ok {
		t.Error("a cluster-caused notice was counted as a preemption")
	}
}

// TestQuotaValue: CPU goes out in cores (Gantry counts thousandths), the rest as counted.
func TestQuotaValue(t *testing.T) {
	for _, tc := range []struct {
		r    resources.Name
		a    resources.Amount
		want float64
	}{
		{resources.CPU, 1500, 1.5},
		{resources.Memory, 1 << 30, 1 << 30},
		{resources.NvidiaGPU, 8, 8},
		{resources.GPUMilli, 250, 250},
	} {
		if got := quotaValue(tc.r, tc.a); got != tc.want {
			t.Errorf("quotaValue(%s, %d) = %v, want %v", tc.r, tc.a, got, tc.want)
		}
	}
}
