package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// oneNodeWorld is a world of one 8-GPU node "n".
func oneNodeWorld(t *testing.T) *world {
	t.Helper()
	n, err := cluster.NodeFromKube(api.Node{Object: *k8s.MakeNode("n").H100(8).Obj()})
	if err != nil {
		t.Fatal(err)
	}
	return &world{objs: &api.Objects{}, nodes: []cluster.Node{n}, nodeIndex: map[string]int{"n": 0}}
}

// TestReservationRecordRoundTrip: a reservation written to the annotation reads back
// the same (pods with the pod set's requests and the same devices), and a record the
// cluster can no longer honour is an error rather than a wrong reservation.
func TestReservationRecordRoundTrip(t *testing.T) {
	w := oneNodeWorld(t)
	model := &api.Workload{Meta: api.Meta{Namespace: "ns", Name: "g"}, PodSets: []api.PodSet{
		{Name: "main", Count: 2, Requests: resources.Vector{resources.NvidiaGPU: 2}}}}
	pod := func(i int, ids ...string) cluster.BoundPod {
		a, err := devices.AssignmentFromIDs(w.nodes[0].Devices, ids)
		if err != nil {
			t.Fatal(err)
		}
		return cluster.BoundPod{Ref: cluster.PodRef{Workload: "ns/g", PodSet: "main", Index: i}, Node: "n",
			Requests: model.PodSets[0].Requests, Devices: a}
	}
	eta := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := plan.Reservation{Workload: "ns/g", Nodes: []string{"n"}, ETA: eta, Waits: []api.WorkloadID{"ns/x"},
		Pods: []cluster.BoundPod{pod(0, "GPU-0", "GPU-1"), pod(1, "GPU-6", "GPU-7")}}
	value := formatReservation(r)
	back, err := parseReservation(value, model, w)
	if err != nil {
		t.Fatal(err)
	}
	if !back.ETA.Equal(eta) || fmt.Sprint(back.Nodes) != "[n]" || fmt.Sprint(back.Waits) != "[ns/x]" || back.Workload != "ns/g" {
		t.Errorf("read back %+v, want ETA %s on [n] waiting for [ns/x]", back, eta)
	}
	if again := formatReservation(back); again != value {
		t.Errorf("round trip changed the record:\n%s\n%s", value, again)
	}
	if back.Pods[1].Requests[resources.NvidiaGPU] != 2 || back.Pods[1].Devices.MilliGPU() != 2000 {
		t.Errorf("pod 1 read back as %+v, want 2 GPUs requested and held", back.Pods[1])
	}
	for name, bad := range map[string]string{
		"unknown node":   strings.Replace(value, `"node":"n"`, `"node":"gone"`, 1),
		"unknown device": strings.Replace(value, "GPU-7", "GPU-9", 1),
		"not JSON":       "{",
	} {
		if _, err := parseReservation(bad, model, w); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

// TestHistoryRecords: records append newest last, at most maxHistoryRecords are kept,
// and an unreadable value counts as none.
func TestHistoryRecords(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	value := ""
	for i := 0; i < maxHistoryRecords+4; i++ {
		value = appendHistory(value, placement.PreemptionRecord{Queue: "cq", At: t0.Add(time.Duration(i) * time.Minute), GPUMilli: 1000})
	}
	recs := parseHistory("ns/v", value)
	if len(recs) != maxHistoryRecords {
		t.Fatalf("%d records kept, want %d", len(recs), maxHistoryRecords)
	}
	if first, last := recs[0], recs[len(recs)-1]; !first.At.Equal(t0.Add(4*time.Minute)) || !last.At.Equal(t0.Add(19*time.Minute)) ||
		last.Workload != "ns/v" || last.Queue != "cq" || last.GPUMilli != 1000 {
		t.Errorf("kept %+v .. %+v, want the newest, from +4m to +19m, of ns/v in cq", first, last)
	}
	if got := parseHistory("ns/v", "not json"); got != nil {
		t.Errorf("unreadable value read as %+v", got)
	}
	if got := parseHistory("ns/v", appendHistory("not json", recs[0])); len(got) != 1 {
		t.Errorf("appending to an unreadable value kept %d records, want 1 (start over)", len(got))
	}
}

// TestRestoredHistoryAndReservations: a restart restores the preemptions inside the
// longest disruption budget window, finished victims' included, and the pending
// workloads' reservations; without any budget no history is restored.
func TestRestoredHistoryAndReservations(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	w := oneNodeWorld(t)
	w.objs = &api.Objects{ClusterQueues: []api.ClusterQueue{
		{Meta: api.Meta{Name: "cq"}, DisruptionBudget: api.DisruptionBudget{MaxGPUs: 8, Window: time.Hour}},
		{Meta: api.Meta{Name: "short"}, DisruptionBudget: api.DisruptionBudget{MaxGPUs: 8, Window: time.Minute}}}}
	at := func(ago time.Duration) placement.PreemptionRecord {
		return placement.PreemptionRecord{Queue: "cq", At: now.Add(-ago), GPUMilli: 1000}
	}
	hist := appendHistory(appendHistory("", at(2*time.Hour)), at(30*time.Minute))
	done := k8s.MakeWorkload("ns", "done").Annotate(AnnotationPreemptionHistory, appendHistory("", at(10*time.Minute))).Obj()
	done.Status.Conditions = []metav1.Condition{{Type: v1alpha1.WorkloadFinished, Status: metav1.ConditionTrue, Reason: "Succeeded"}}
	res := plan.Reservation{ETA: now.Add(time.Hour), Pods: []cluster.BoundPod{{Ref: cluster.PodRef{Workload: "ns/g", PodSet: "main"}, Node: "n"}}}
	w.workloads = []v1alpha1.Workload{
		k8s.MakeWorkload("ns", "v").Annotate(AnnotationPreemptionHistory, hist).Obj(), done,
		k8s.MakeWorkload("ns", "g").Annotate(AnnotationReservation, formatReservation(res)).Obj(),
	}
	cs, err := buildState(w, ToAPIWorkload, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := readRestored(w, cs, now)
	if len(r.history) != 2 || r.history[0].Workload != "ns/done" || r.history[1].Workload != "ns/v" || !r.history[1].At.Equal(now.Add(-30*time.Minute)) {
		t.Errorf("history %+v, want ns/done's (-10m) and ns/v's -30m record, not its -2h one", r.history)
	}
	if got, ok := r.reservations["ns/g"]; !ok || !got.ETA.Equal(res.ETA) || len(got.Pods) != 1 || len(r.warnings) > 0 {
		t.Errorf("reservations %+v (warnings %v), want ns/g's at %s", r.reservations, r.warnings, res.ETA)
	}
	w.objs = &api.Objects{}
	if r := readRestored(w, cs, now); len(r.history) != 0 {
		t.Errorf("without budgets restored history %+v, want none", r.history)
	}
}
