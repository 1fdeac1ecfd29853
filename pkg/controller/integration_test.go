package controller

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestJobGangAllOrNothing: a 4-pod Job that cannot be placed whole stays suspended
// with no pod bound (and says why); one that fits has all 4 pods bound, each with its
// own GPUs written in the device annotation.
func TestJobGangAllOrNothing(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("gang-1").H100(4).Obj(), k8s.MakeNode("gang-2").H100(4).Obj(),
		k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("gang-cq").Quota("h100", "nvidia.com/gpu", "16").Obj(),
		k8s.MakeLocalQueue("", "lq", "gang-cq").Obj())
	f.startController()

	// 4 pods × 3 GPUs: quota allows it, but only one such pod fits per 4-GPU node.
	f.create(k8s.MakeJob("", "too-big").Queue("lq").Pods(4).GPUs("3").Obj())
	f.eventually(20*time.Second, "too-big rejected by placement", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("too-big"))
		if wl == nil {
			return false, "no workload yet"
		}
		return wl.Status.State == v1alpha1.StatePending && strings.Contains(wl.Status.Message, "gang") && wl.Status.Admission == nil,
			string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message
	})
	time.Sleep(500 * time.Millisecond) // several passes: still nothing may start
	var job batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "too-big"}, &job); err != nil {
		t.Fatal(err)
	}
	if !ptr.Deref(job.Spec.Suspend, false) {
		t.Errorf("too-big was unsuspended without an admission")
	}
	if pods := f.jobPods("too-big"); len(pods) != 0 {
		t.Errorf("too-big has pods %s; want none (gang not placeable)", describePods(pods))
	}
	if err := f.c.Delete(f.ctx, &job, client.PropagationPolicy("Background")); err != nil {
		t.Fatal(err)
	}

	// 4 pods × 2 GPUs fill both nodes exactly.
	f.create(k8s.MakeJob("", "fits").Queue("lq").Pods(4).GPUs("2").Obj())
	pods := f.waitBound("fits", 4)
	perNode := map[string]int{}
	for _, p := range pods {
		perNode[p.Spec.NodeName]++
		if got := strings.Split(p.Annotations[AnnotationDevices], ","); len(got) != 2 {
			t.Errorf("pod %s devices %q: want 2 GPUs", p.Name, p.Annotations[AnnotationDevices])
		}
	}
	if perNode["gang-1"] != 2 || perNode["gang-2"] != 2 {
		t.Errorf("pods per node = %v, want 2 on each", perNode)
	}
	f.assertNoDeviceSharedTwice()
	wl := f.workload(WorkloadNameForJob("fits"))
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadAdmitted) || wl.Status.Admission.ClusterQueue != "gang-cq" {
		t.Errorf("fits status = %+v, want Admitted by gang-cq", wl.Status)
	}
}

// TestPreemptionEvictsRequeuesAndReadmits: a high-priority Job preempts a running
// low-priority one (notice, then eviction), runs, and when it finishes the victim is
// admitted again.
func TestPreemptionEvictsRequeuesAndReadmits(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("pre-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("pre-cq").Quota("h100", "nvidia.com/gpu", "4").Preemption("LowerPriority", "Never").Obj(),
		k8s.MakeLocalQueue("", "lq", "pre-cq").Obj(), k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()

	f.create(k8s.MakeJob("", "low").Queue("lq").Priority("low").Pods(2).GPUs("2").Obj())
	f.waitBound("low", 2)
	f.create(k8s.MakeJob("", "high").Queue("lq").Priority("high").Pods(1).GPUs("4").Obj())

	f.eventually(20*time.Second, "low evicted", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("low"))
		c := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.WorkloadEvicted)
		return c != nil && wl.Status.RequeueState != nil, string(wl.Status.State) + " " + wl.Status.Message
	})
	low := f.workload(WorkloadNameForJob("low"))
	if low.Annotations[AnnotationPreemptedBy] != f.ns+"/"+WorkloadNameForJob("high") {
		t.Errorf("low preempted-by = %q, want %s/%s", low.Annotations[AnnotationPreemptedBy], f.ns, WorkloadNameForJob("high"))
	}
	f.waitBound("high", 1)
	f.assertNoDeviceSharedTwice()

	f.finishJob("high")
	f.eventually(30*time.Second, "low readmitted after high finished", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("low"))
		return wl.Status.State == v1alpha1.StateAdmitted && boundCount(f.jobPods("low")) == 2,
			string(wl.Status.State) + " " + wl.Status.Message + " pods: " + describePods(f.jobPods("low"))
	})
	if n := ptr.Deref(f.workload(WorkloadNameForJob("low")).Status.RequeueState.Count, 0); n != 1 {
		t.Errorf("low requeue count = %d, want 1", n)
	}
}

// TestCohortBorrowAndReclaim: queue a borrows b's idle quota; when b needs it back,
// a's borrowing workload is preempted and b's runs.
func TestCohortBorrowAndReclaim(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("co-1").H100(4).Obj(), k8s.MakeNode("co-2").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("cq-a").Cohort("co").Quota("h100", "nvidia.com/gpu", "4").Preemption("Never", "Any").Obj(),
		k8s.MakeClusterQueue("cq-b").Cohort("co").Quota("h100", "nvidia.com/gpu", "4").Preemption("Never", "Any").Obj(),
		k8s.MakeLocalQueue("", "lq-a", "cq-a").Obj(), k8s.MakeLocalQueue("", "lq-b", "cq-b").Obj())
	f.startController()

	f.create(k8s.MakeJob("", "borrower").Queue("lq-a").Pods(2).GPUs("4").Obj())
	f.waitBound("borrower", 2)
	if msg := f.workload(WorkloadNameForJob("borrower")).Status.Message; !strings.Contains(msg, "borrowing") {
		t.Errorf("borrower admission message %q does not say it borrows", msg)
	}
	f.eventually(10*time.Second, "cq-a status shows the borrowed quota", func() (bool, string) {
		var cq v1alpha1.ClusterQueue
		if err := f.c.Get(f.ctx, client.ObjectKey{Name: "cq-a"}, &cq); err != nil {
			return false, err.Error()
		}
		return cq.Status.Usage == "h100 nvidia.com/gpu 8/4 (4 borrowed)" && cq.Status.AdmittedWorkloads == 1, cq.Status.Usage
	})
	f.create(k8s.MakeJob("", "owner").Queue("lq-b").Pods(1).GPUs("4").Obj())
	f.waitBound("owner", 1)
	wl := f.workload(WorkloadNameForJob("borrower"))
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadEvicted) || wl.Status.Admission != nil {
		t.Errorf("borrower status = %s %s, want evicted and requeued", wl.Status.State, wl.Status.Message)
	}
	f.assertNoDeviceSharedTwice()
}
