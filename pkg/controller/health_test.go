package controller

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestUnhealthyGPUs reads the node agent's annotation into GPU indices.
func TestUnhealthyGPUs(t *testing.T) {
	cases := []struct {
		name    string
		value   string
		want    []int // sorted GPU indices marked unhealthy
		wantErr bool  // the annotation is not a list of device IDs
	}{
		{name: "none", value: ""},
		{name: "whole GPUs", value: "GPU-3,GPU-1", want: []int{1, 3}},
		{name: "MIG instance marks its GPU", value: "GPU-2/mig-1g.10gb@4, GPU-2/mig-1g.10gb@5", want: []int{2}},
		{name: "garbage", value: "gpu3", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{devices.AnnotationUnhealthyDevices: tc.value}}}
			got, err := UnhealthyGPUs(n)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && len(got)+len(tc.want) > 0 && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUnhealthyDeviceRequeuesGang: when the node agent reports a GPU of a running gang
// unhealthy, the gang is evicted whole (reason DeviceUnhealthy), requeued, and
// readmitted on healthy GPUs only.
func TestUnhealthyDeviceRequeuesGang(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("hl-1").H100(4).Obj(), k8s.MakeNode("hl-2").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("hl-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(), k8s.MakeLocalQueue("", "lq", "hl-cq").Obj())
	f.startController()
	f.create(k8s.MakeJob("", "train").Queue("lq").Pods(1).GPUs("4").Obj())
	first := f.waitBound("train", 1)[0].Spec.NodeName

	f.markUnhealthy(first, "GPU-2")
	// The eviction and the readmission may come in one pass: look for their traces.
	f.eventually(20*time.Second, "gang evicted for the unhealthy GPU", func() (bool, string) {
		return f.hasEvent(WorkloadNameForJob("train"), ReasonEvicted, "GPU-2 is unhealthy"), "no eviction event"
	})
	var pods []corev1.Pod
	f.eventually(30*time.Second, "readmitted on the healthy node", func() (bool, string) {
		pods = f.jobPods("train")
		return len(pods) == 1 && pods[0].Spec.NodeName != "" && pods[0].Spec.NodeName != first, describePods(pods)
	})
	wl := f.workload(WorkloadNameForJob("train"))
	if wl.Status.RequeueState == nil || *wl.Status.RequeueState.Count != 1 || wl.Status.Admission.Placements[0].Node == first {
		t.Errorf("train status = %+v; want requeued once and admitted away from %s", wl.Status, first)
	}
	f.assertNoDeviceSharedTwice()
}

// TestEvictionRespectsPodDisruptionBudget: a preemption whose eviction a PDB refuses
// leaves the victim running, says so in an EvictionBlocked event and retries; once the
// PDB is gone the victim is evicted and the preemptor runs.
func TestEvictionRespectsPodDisruptionBudget(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("pdb-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("pdb-cq").Quota("h100", "nvidia.com/gpu", "4").Preemption("LowerPriority", "Never").Obj(),
		k8s.MakeLocalQueue("", "lq", "pdb-cq").Obj(), k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()
	f.create(k8s.MakeJob("", "low").Queue("lq").Priority("low").Pods(1).GPUs("4").Obj())
	low := f.waitBound("low", 1)[0]
	// The pod is Ready (healthy), and the PDB's status, which no disruption controller
	// writes here, allows no disruption: every eviction is refused.
	patch := client.MergeFrom(low.DeepCopy())
	low.Status.Conditions = append(low.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	if err := f.c.Status().Patch(f.ctx, &low, patch); err != nil {
		t.Fatal(err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "keep-low"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrTo(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/job-name": "low"}}}}
	f.create(pdb)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0,
		CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1}
	if err := f.c.Status().Update(f.ctx, pdb); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeJob("", "high").Queue("lq").Priority("high").Pods(1).GPUs("4").Obj())
	f.eventually(20*time.Second, "EvictionBlocked event", func() (bool, string) {
		return f.hasEvent(WorkloadNameForJob("low"), ReasonEvictionBlocked, "PodDisruptionBudget"), "no event yet"
	})
	if wl := f.workload(WorkloadNameForJob("low")); wl.Status.Admission == nil || boundCount(f.jobPods("low")) != 1 {
		t.Fatalf("low lost its admission or pod while the PDB blocks: %s %s", wl.Status.State, describePods(f.jobPods("low")))
	}
	if err := f.c.Delete(f.ctx, pdb); err != nil {
		t.Fatal(err)
	}
	f.waitBound("high", 1)
	if wl := f.workload(WorkloadNameForJob("low")); wl.Status.Admission != nil {
		t.Errorf("low still admitted after its eviction went through")
	}
	f.assertNoDeviceSharedTwice()
}

func ptrTo[T any](v T) *T { return &v }

// hasEvent reports whether an event with reason and a message containing text was
// recorded on the named object of the test's namespace.
func (f *fixture) hasEvent(object, reason, text string) bool {
	var evs corev1.EventList
	if err := f.c.List(f.ctx, &evs, client.InNamespace(f.ns)); err != nil {
		return false
	}
	for _, e := range evs.Items {
		if e.Reason == reason && e.InvolvedObject.Name == object && strings.Contains(e.Message, text) {
			return true
		}
	}
	return false
}

// TestUnhealthyDeviceBacksOff: with a requeue backoff, a gang evicted for an unhealthy
// GPU is not readmitted before the backoff is over, although a healthy node is free;
// the Workload shows the failure count and requeueAt, and a controller restarted
// during the backoff resumes it (no readmission before requeueAt) rather than
// forgetting it.
func TestUnhealthyDeviceBacksOff(t *testing.T) {
	f := newFixture(t)
	f.tune = func(o *Options) { o.Engine.Requeue = engine.RequeuePolicy{BackoffBase: 6 * time.Second} }
	f.create(k8s.MakeNode("bo-1").H100(4).Obj(), k8s.MakeNode("bo-2").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("bo-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(), k8s.MakeLocalQueue("", "lq", "bo-cq").Obj())
	f.startController()
	f.create(k8s.MakeJob("", "train").Queue("lq").Pods(1).GPUs("4").Obj())
	first := f.waitBound("train", 1)[0].Spec.NodeName

	f.markUnhealthy(first, "GPU-1")
	var requeueAt time.Time
	f.eventually(20*time.Second, "evicted with a requeueAt", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("train"))
		if wl.Status.Admission != nil || wl.Status.RequeueState == nil || wl.Status.RequeueState.RequeueAt == nil {
			return false, string(wl.Status.State) + " " + wl.Status.Message
		}
		requeueAt = wl.Status.RequeueState.RequeueAt.Time
		return wl.Annotations[AnnotationFailures] == "1", "failures annotation " + wl.Annotations[AnnotationFailures]
	})
	f.stopController() // restart in the middle of the backoff
	f.startController()
	var pods []corev1.Pod
	f.eventually(30*time.Second, "readmitted after the backoff", func() (bool, string) {
		pods = f.jobPods("train")
		return len(pods) == 1 && pods[0].Spec.NodeName != "", describePods(pods)
	})
	wl := f.workload(WorkloadNameForJob("train"))
	admitted := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.WorkloadAdmitted)
	if admitted == nil || admitted.LastTransitionTime.Time.Before(requeueAt) {
		t.Errorf("readmitted at %v, before requeueAt %s", admitted, requeueAt)
	}
	f.assertNoDeviceSharedTwice()
}

// markUnhealthy annotates node as the node agent does when device goes unhealthy.
func (f *fixture) markUnhealthy(name, device string) {
	f.t.Helper()
	var node corev1.Node
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: name}, &node); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Annotations = map[string]string{devices.AnnotationUnhealthyDevices: device}
	if err := f.c.Patch(f.ctx, &node, patch); err != nil {
		f.t.Fatal(err)
	}
}
