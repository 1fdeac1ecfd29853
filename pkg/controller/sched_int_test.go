package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/gantry-sched/gantry/pkg/plan"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The controller drives the same engine.Scheduler the simulator drives, built from the
// ClusterQueues: their own preemption policy, placement policy and flavor fallback hold
// on a cluster as they do in `gantry simulate`.

// TestNeverPreemptsWithinClusterQueue: a ClusterQueue with withinClusterQueue: Never
// does not preempt on the nodes either. The high-priority Job fits the quota but not
// the node, so it waits as the placement layer says, and the running low-priority Job
// gets no notice.
func TestNeverPreemptsWithinClusterQueue(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("nv-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("nv-cq").Quota("h100", "nvidia.com/gpu", "8").Preemption("Never", "Never").Obj(),
		k8s.MakeLocalQueue("", "lq", "nv-cq").Obj(), k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()

	f.create(k8s.MakeJob("", "low").Queue("lq").Priority("low").Pods(1).GPUs("4").Obj())
	f.waitBound("low", 1)
	f.create(k8s.MakeJob("", "high").Queue("lq").Priority("high").Pods(1).GPUs("4").Obj())
	f.eventually(20*time.Second, "high rejected by placement", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("high"))
		if wl == nil {
			return false, "no workload yet"
		}
		return wl.Status.Reason == string(plan.ReasonQuotaFitsClusterDoesNot), string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message
	})
	low := f.workload(WorkloadNameForJob("low"))
	if low.Annotations[AnnotationPreemptionNotice] != "" || low.Status.Admission == nil {
		t.Errorf("low noticed %q, admission %v; want it running untouched", low.Annotations[AnnotationPreemptionNotice], low.Status.Admission)
	}
	if n := f.eventCount(WorkloadNameForJob("low"), ReasonPreempted); n != 0 {
		t.Errorf("low got %d preemption notices, want none", n)
	}
}

// TestClusterQueuePlacementPolicy: each ClusterQueue places with its own scorers. A
// queue whose policy is spread puts a 2-pod Job on two nodes; a queue without one
// binpacks the next 2-pod Job onto one node.
func TestClusterQueuePlacementPolicy(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("pp-1").H100(4).Obj(), k8s.MakeNode("pp-2").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("pp-spread").Quota("h100", "nvidia.com/gpu", "8").Annotate(manifest.AnnotationPlacementScorers, "spread=1").Obj(),
		k8s.MakeClusterQueue("pp-pack").Quota("h100", "nvidia.com/gpu", "8").Obj(),
		k8s.MakeLocalQueue("", "lq-spread", "pp-spread").Obj(), k8s.MakeLocalQueue("", "lq-pack", "pp-pack").Obj())
	f.startController()

	f.create(k8s.MakeJob("", "spread").Queue("lq-spread").Pods(2).GPUs("1").Obj())
	if nodes := nodesOf(f.waitBound("spread", 2)); len(nodes) != 2 {
		t.Errorf("spread queue placed its pods on %v, want two nodes", nodes)
	}
	f.create(k8s.MakeJob("", "pack").Queue("lq-pack").Pods(2).GPUs("1").Obj())
	if nodes := nodesOf(f.waitBound("pack", 2)); len(nodes) != 1 {
		t.Errorf("default queue placed its pods on %v, want one node (binpack)", nodes)
	}
	f.assertNoDeviceSharedTwice()
}

// TestFlavorFallback: the first flavor's quota admits the Job but its nodes are full,
// so the ClusterQueue's next flavor is tried and the Job runs on its nodes.
func TestFlavorFallback(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("fb-spot").H100(4).Label("pool", "spot").Obj(), k8s.MakeNode("fb-od").H100(4).Label("pool", "ondemand").Obj(),
		k8s.MakeFlavor("spot").Label("pool", "spot").Obj(), k8s.MakeFlavor("ondemand").Label("pool", "ondemand").Obj(),
		k8s.MakeClusterQueue("fb-cq").Flavors("nvidia.com/gpu", "8", "spot", "ondemand").Obj(), k8s.MakeLocalQueue("", "lq", "fb-cq").Obj())
	f.startController()

	f.create(k8s.MakeJob("", "first").Queue("lq").Pods(1).GPUs("4").Obj())
	if nodes := nodesOf(f.waitBound("first", 1)); len(nodes) != 1 || !nodes["fb-spot"] {
		t.Fatalf("first on %v, want fb-spot (the first flavor)", nodes)
	}
	f.create(k8s.MakeJob("", "second").Queue("lq").Pods(1).GPUs("4").Obj())
	if nodes := nodesOf(f.waitBound("second", 1)); len(nodes) != 1 || !nodes["fb-od"] {
		t.Errorf("second on %v, want fb-od (fallback flavor)", nodes)
	}
	adm := f.workload(WorkloadNameForJob("second")).Status.Admission
	if adm == nil || len(adm.PodSetAssignments) != 1 || adm.PodSetAssignments[0].Flavors["nvidia.com/gpu"] != "ondemand" {
		t.Errorf("second admission %+v, want flavor ondemand", adm)
	}
}

// TestRestartKeepsReservationETA: a reservation survives a restart with its ETA. The
// gang's pod set "a" (2 GPUs) goes anywhere, "b" (4 GPUs) only on the big node, busy
// until x ends. While l fills the small node, the reservation puts "a" there and "b"
// on the big node when x ends. With l gone (deleted while no controller runs), a new
// walk would put "a" on the big node first (binpack) and find no ETA; the restarted
// controller restores the reservation, still valid, and keeps the ETA. The scenario
// needs bin-packing, so its queue ranks nodes with the binpack scorer.
func TestRestartKeepsReservationETA(t *testing.T) {
	f := newFixture(t)
	f.tune = func(o *Options) { o.Engine.Reservations = true }
	f.create(k8s.MakeNode("rv-big").H100(4).Label("pool", "big").Obj(), k8s.MakeNode("rv-small").H100(8).Label("pool", "small").Obj(),
		k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("rv-cq").Quota("h100", "nvidia.com/gpu", "100").Preemption("Never", "Never").
			Annotate(manifest.AnnotationPlacementScorers, "binpack=1").Obj(),
		k8s.MakeLocalQueue("", "lq", "rv-cq").Obj())
	f.startController()

	f.create(gpuWorkload("x", 600, podSetOf("main", 4, nil)))
	f.waitAdmittedOn("x", "rv-big")
	f.create(gpuWorkload("l", 0, podSetOf("main", 6, nil)))
	f.waitAdmittedOn("l", "rv-small")
	f.create(gpuWorkload("gang", 0, podSetOf("a", 2, nil), podSetOf("b", 4, map[string]string{"pool": "big"})))
	before := f.waitReserved("gang", "")
	if strings.Contains(before.Status.Message, "keeps its reservation") {
		t.Fatalf("reservation kept before the restart (%s): the scenario tests nothing", before.Status.Message)
	}

	f.stopController()
	f.deleteWorkload("l")
	f.startController()
	after := f.waitReserved("gang", "keeps its reservation")
	if !after.Status.ETA.Equal(before.Status.ETA) {
		t.Errorf("ETA %s after the restart, want %s", after.Status.ETA, before.Status.ETA)
	}
}

// TestIdlePassHandsNoWorkload: a workload the quota refuses is parked; passes in which
// nothing that could change its answer happened do not hand it to the engine again.
func TestIdlePassHandsNoWorkload(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("idle-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("idle-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "idle-cq").Obj())
	f.startController()

	f.create(k8s.MakeJob("", "too-big").Queue("lq").Pods(2).GPUs("4").Obj())
	f.eventually(20*time.Second, "too-big refused by quota", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("too-big"))
		return wl != nil && wl.Status.State == v1alpha1.StatePending && wl.Status.Reason != "", "no decision yet"
	})
	f.pokePasses(2) // the pass that decided has finished
	_, considered := f.ctl.passStats()
	if considered == 0 {
		t.Fatalf("no pending workload was ever handed to the engine")
	}
	f.pokePasses(3)
	if _, now := f.ctl.passStats(); now != considered {
		t.Errorf("%d pending workloads handed to the engine by passes where nothing changed, want 0", now-considered)
	}
}

// gpuWorkload is a Workload made directly (no job object), in queue lq; maxSeconds 0
// leaves its runtime unbounded.
func gpuWorkload(name string, maxSeconds int32, sets ...v1alpha1.PodSet) *v1alpha1.Workload {
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.WorkloadSpec{QueueName: "lq", PodSets: sets}}
	if maxSeconds > 0 {
		wl.Spec.MaximumExecutionTimeSeconds = ptr.To(maxSeconds)
	}
	return wl
}

// podSetOf is one pod of gpus whole GPUs, optionally on nodes with the given labels.
func podSetOf(name string, gpus int64, selector map[string]string) v1alpha1.PodSet {
	return v1alpha1.PodSet{Name: name, Count: 1, NodeSelector: selector,
		Requests: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}}
}

// waitAdmittedOn waits until the Workload is admitted and fails unless all its pods
// are planned on node.
func (f *fixture) waitAdmittedOn(name, node string) {
	f.t.Helper()
	var wl *v1alpha1.Workload
	f.eventually(20*time.Second, name+" admitted", func() (bool, string) {
		wl = f.workload(name)
		if wl == nil {
			return false, "no workload"
		}
		return wl.Status.Admission != nil, wl.Status.Reason + ": " + wl.Status.Message
	})
	for _, p := range wl.Status.Admission.Placements {
		if p.Node != node {
			f.t.Fatalf("%s placed on %s, want %s (the scenario depends on it)", name, p.Node, node)
		}
	}
}

// waitReserved waits until the Workload holds a reservation recorded on the object
// (status and annotation) whose message contains want.
func (f *fixture) waitReserved(name, want string) *v1alpha1.Workload {
	f.t.Helper()
	var wl *v1alpha1.Workload
	f.eventually(30*time.Second, name+" reserved ("+want+")", func() (bool, string) {
		wl = f.workload(name)
		if wl == nil {
			return false, "no workload"
		}
		ok := wl.Status.Reason == ReasonReserved && wl.Status.ETA != nil && wl.Annotations[AnnotationReservation] != "" &&
			strings.Contains(wl.Status.Message, want)
		return ok, wl.Status.Reason + ": " + wl.Status.Message
	})
	return wl
}

func (f *fixture) deleteWorkload(name string) {
	f.t.Helper()
	wl := f.workload(name)
	if wl == nil {
		f.t.Fatalf("workload %s not found", name)
	}
	if err := f.c.Delete(f.ctx, wl); err != nil {
		f.t.Fatal(err)
	}
}

// pokePasses makes the running controller run at least n more passes, each woken by a
// new pod that is nobody's and bound nowhere: nothing a decision depends on.
func (f *fixture) pokePasses(n int) {
	f.t.Helper()
	for i := 0; i < n; i++ {
		before, _ := f.ctl.passStats()
		name := fmt.Sprintf("poke-%d-%d", before, i)
		f.create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none"}}}})
		f.eventually(10*time.Second, "a pass after "+name, func() (bool, string) {
			p, _ := f.ctl.passStats()
			return p > before, fmt.Sprintf("%d passes", p)
		})
	}
}

// nodesOf is the set of nodes the pods are bound to.
func nodesOf(pods []corev1.Pod) map[string]bool {
	out := map[string]bool{}
	for _, p := range pods {
		out[p.Spec.NodeName] = true
	}
	return out
}
