package controller

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestPreemptorRecordsVictimsOncePerWait: a high-priority preemptor needs two victims
// in turn. First quota-victim, out of its ClusterQueue's quota (the node then has room);
// while that one leaves, node-victim (another queue) takes the room, so once the quota
// is free the preemptor needs node-victim off the node too. While it waits its record
// lists both victims, each once; no victim gets a second notice; and the record is
// gone once the preemptor is admitted.
func TestPreemptorRecordsVictimsOncePerWait(t *testing.T) {
	f := newFixture(t)
	t.Cleanup(func() {
		if t.Failed() {
			dumpEvents(t, f)
		}
	})
	f.create(k8s.MakeNode("nom-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("nom-hi").Quota("h100", "nvidia.com/gpu", "4").Preemption("LowerPriority", "Never").Obj(),
		k8s.MakeClusterQueue("nom-lo").Quota("h100", "nvidia.com/gpu", "4").Obj(),
		k8s.MakeLocalQueue("", "lq-hi", "nom-hi").Obj(), k8s.MakeLocalQueue("", "lq-lo", "nom-lo").Obj(),
		k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()

	f.create(k8s.MakeJob("", "quota-victim").Queue("lq-hi").Priority("low").Pods(1).GPUs("2").Obj())
	f.waitBound("quota-victim", 1)
	f.create(k8s.MakeJob("", "preemptor").Queue("lq-hi").Priority("high").Pods(1).GPUs("4").Obj())
	pName := WorkloadNameForJob("preemptor")
	f.eventually(10*time.Second, "quota-victim noticed", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("quota-victim"))
		return wl.Annotations[AnnotationPreemptionNotice] != "" || wl.Status.RequeueState != nil, wl.Status.Message
	})
	f.create(k8s.MakeJob("", "node-victim").Queue("lq-lo").Priority("low").Pods(1).GPUs("2").Obj())

	victims := []api.WorkloadID{
		api.WorkloadID(f.ns + "/" + WorkloadNameForJob("quota-victim")),
		api.WorkloadID(f.ns + "/" + WorkloadNameForJob("node-victim")),
	}
	seen := map[api.WorkloadID]bool{} // victims seen in the preemptor's record while pending
	f.eventually(40*time.Second, "preemptor admitted", func() (bool, string) {
		wl := f.workload(pName)
		if wl == nil {
			return false, "no workload yet"
		}
		rec := wl.Annotations[AnnotationNominatedVictims]
		if wl.Status.Admission == nil {
			got := parseNominated(rec)
			if len(got) != len(strings.Split(rec, ",")) && rec != "" {
				t.Errorf("record %q lists a victim twice", rec)
			}
			for _, v := range got {
				seen[v] = true
			}
		}
		return wl.Status.Admission != nil, fmt.Sprintf("%s %s record=%q", wl.Status.State, wl.Status.Message, rec)
	})
	for _, v := range victims {
		if !seen[v] {
			t.Errorf("preemptor's record never listed %s while it waited (saw %v)", v, seen)
		}
	}
	f.eventually(10*time.Second, "record cleared after admission", func() (bool, string) {
		rec, ok := f.workload(pName).Annotations[AnnotationNominatedVictims]
		return !ok, "record " + rec
	})
	f.waitBound("preemptor", 1)
	for _, v := range victims {
		name := strings.TrimPrefix(string(v), f.ns+"/")
		wl := f.workload(name)
		if wl.Annotations[AnnotationPreemptedBy] != f.ns+"/"+pName {
			t.Errorf("%s preempted-by = %q, want %s/%s", name, wl.Annotations[AnnotationPreemptedBy], f.ns, pName)
		}
		if wl.Status.RequeueState == nil || ptr.Deref(wl.Status.RequeueState.Count, 0) != 1 {
			t.Errorf("%s requeue state = %+v, want evicted exactly once", name, wl.Status.RequeueState)
		}
		if n := f.eventCount(name, ReasonPreempted); n != 1 {
			t.Errorf("%s got %d preemption notices, want 1", name, n)
		}
		if wl.Status.Admission != nil {
			t.Errorf("%s admitted again while the preemptor holds the node", name)
		}
	}
	f.assertNoDeviceSharedTwice()
}

// eventCount sums the events with reason on the named object of the test's namespace.
func (f *fixture) eventCount(object, reason string) int {
	var evs corev1.EventList
	if err := f.c.List(f.ctx, &evs, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, e := range evs.Items {
		if e.Reason == reason && e.InvolvedObject.Name == object {
			n += int(max(e.Count, 1))
		}
	}
	return n
}

// dumpEvents logs the namespace's events in order (for a failed test's timeline).
func dumpEvents(t *testing.T, f *fixture) {
	var evs corev1.EventList
	if err := f.c.List(f.ctx, &evs, client.InNamespace(f.ns)); err != nil {
		t.Log(err)
		return
	}
	sort.SliceStable(evs.Items, func(i, j int) bool { return evs.Items[i].FirstTimestamp.Before(&evs.Items[j].FirstTimestamp) })
	for _, e := range evs.Items {
		t.Logf("%s %s %s x%d %s", e.FirstTimestamp.Format("15:04:05"), e.InvolvedObject.Name, e.Reason, e.Count, e.Message)
	}
}
