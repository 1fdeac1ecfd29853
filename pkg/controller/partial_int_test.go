package controller

import (
	"fmt"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/manifest"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestJobPartialAdmission: Kueue's partial-admission sample on a real API server. A Job
// of 20 one-GPU pods with job-min-parallelism 9, in a queue of 9 GPUs on nodes with 16,
// is admitted with 9 pods: its Workload records count 9, the Job runs with parallelism
// 9, and 9 pods are bound. Preempted, it is suspended with its parallelism of 20 back.
func TestJobPartialAdmission(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("part-1").H100(8).Obj(), k8s.MakeNode("part-2").H100(8).Obj(),
		k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("part-cq").Quota("h100", "nvidia.com/gpu", "9").Preemption("LowerPriority", "Never").Obj(),
		k8s.MakeLocalQueue("", "lq", "part-cq").Obj(), k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()

	f.create(k8s.MakeJob("", "sample").Queue("lq").Priority("low").Pods(20).GPUs("1").
		Annotate(manifest.AnnotationJobMinParallelism, "9").Obj())
	f.waitBound("sample", 9)
	var job batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "sample"}, &job); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(job.Spec.Parallelism, 0); got != 9 || ptr.Deref(job.Spec.Suspend, true) {
		t.Errorf("job parallelism %d suspended %v, want 9 and running", got, ptr.Deref(job.Spec.Suspend, true))
	}
	wl := f.workload(WorkloadNameForJob("sample"))
	if wl.Status.Admission == nil || len(wl.Status.Admission.PodSetAssignments) != 1 ||
		ptr.Deref(wl.Status.Admission.PodSetAssignments[0].Count, 0) != 9 || wl.Spec.PodSets[0].Count != 20 {
		t.Fatalf("workload spec %+v admission %+v, want 20 asked and 9 admitted", wl.Spec.PodSets, wl.Status.Admission)
	}
	time.Sleep(500 * time.Millisecond) // several passes: no 10th pod is created or bound
	if pods := f.jobPods("sample"); len(pods) != 9 || boundCount(pods) != 9 {
		t.Errorf("pods %s: want exactly 9, all bound", describePods(pods))
	}
	f.assertNoDeviceSharedTwice()

	f.create(k8s.MakeJob("", "urgent").Queue("lq").Priority("high").Pods(3).GPUs("3").Obj())
	f.eventually(20*time.Second, "sample suspended with its parallelism restored", func() (bool, string) {
		var j batchv1.Job
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "sample"}, &j); err != nil {
			return false, err.Error()
		}
		return ptr.Deref(j.Spec.Suspend, false) && ptr.Deref(j.Spec.Parallelism, 0) == 20,
			fmt.Sprintf("suspended %v parallelism %d", ptr.Deref(j.Spec.Suspend, false), ptr.Deref(j.Spec.Parallelism, 0))
	})
	f.waitBound("urgent", 3)
}
