package controller

import (
	"context"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Partial admission on a cluster, as Kueue does it for batch Jobs: a Job admitted with
// fewer pods than it asks for (its Workload's status.admission.podSetAssignments[].count
// below the pod set's count) runs with spec.parallelism set to the admitted count, so
// the Job controller creates exactly the pods that were placed; when the Job is
// suspended again (evicted, preempted) its parallelism goes back to the Workload's
// count, so the next admission starts from the full request. The Workload's spec is
// never changed: it keeps what the Job asked for.

// fitParallelism adjusts job (in memory, before the suspend patch that carries it) to
// the admission of its Workload wl (read when nil): the admitted count when it resumes,
// the full count when it is suspended, and its pod template gets the checks' pod set
// updates when it resumes. A Workload that cannot be read leaves the Job as it is.
func (ctl *Controller) fitParallelism(ctx context.Context, job *batchv1.Job, suspend bool, wl *v1alpha1.Workload) {
	if wl == nil {
		wl = &v1alpha1.Workload{}
		key := client.ObjectKey{Namespace: job.Namespace, Name: WorkloadNameForJob(job.Name)}
		if err := ctl.c.Get(ctx, key, wl); err != nil {
			return
		}
	}
	if n, ok := parallelismFor(job, wl, suspend); ok {
		job.Spec.Parallelism = ptr.To(n)
	}
	fitPodSetUpdates(job, suspend, wl)
}

// fitPodSetUpdates starts a resumed Job with the pod set updates of its Workload's
// admission checks (podsetupdates.go): node selector and provisioning annotations in
// its pod template, from the Workload's pod set, so a template started before under
// other updates is restored. A suspending patch leaves the template: the API server
// allows template changes only on a suspended Job that has not started, so the
// restoring is done by the next start. A Job never started with updates is left as it
// is.
func fitPodSetUpdates(job *batchv1.Job, suspend bool, wl *v1alpha1.Workload) {
	if suspend || len(wl.Spec.PodSets) != 1 {
		return
	}
	us, err := PodSetUpdatesOf(wl)
	if err != nil {
		return // unreadable: the Job starts as it is (the pass reports the Workload)
	}
	ps := wl.Spec.PodSets[0]
	u := updateFor(us, ps.Name)
	_, updatedBefore := job.Spec.Template.Annotations[AnnotationConsumeProvisioningRequest]
	if u == nil && !updatedBefore {
		return
	}
	startTemplate(&job.Spec.Template, ps.NodeSelector, u)
}

// parallelismFor is the parallelism job should have when it is (un)suspended under wl,
// and false when it should keep its own: a resumed Job takes its admission's count when
// that is below the Workload's; a suspended Job whose parallelism was lowered gets the
// Workload's count back.
func parallelismFor(job *batchv1.Job, wl *v1alpha1.Workload, suspend bool) (int32, bool) {
	if len(wl.Spec.PodSets) != 1 {
		return 0, false // a Job's Workload has one pod set
	}
	ps := wl.Spec.PodSets[0]
	cur := ptr.Deref(job.Spec.Parallelism, 1)
	if suspend {
		return ps.Count, cur < ps.Count
	}
	if wl.Status.Admission == nil {
		return 0, false
	}
	for _, a := range wl.Status.Admission.PodSetAssignments {
		if a.Name == ps.Name && a.Count != nil && *a.Count > 0 && *a.Count < ps.Count {
			return *a.Count, *a.Count != cur
		}
	}
	return 0, false
}
