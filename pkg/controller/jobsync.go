package controller

import (
	"context"
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// syncWorkers bounds the concurrent API writes of job syncing.
const syncWorkers = 16

// syncJobs keeps every queued Job and its Workload in step, level-triggered:
//   - a Job with a queue label gets a Workload (owned by the Job, so it is deleted
//     with it);
//   - a Job runs (spec.suspend=false) exactly while its Workload is admitted and not
//     under a preemption notice past its deadline; Gantry suspends it otherwise;
//   - a finished Job finishes its Workload, which releases quota and capacity.
func (ctl *Controller) syncJobs(ctx context.Context, wls workloadLookup, now time.Time) error {
	var jobs batchv1.JobList
	// Read-only: the informer's objects, not copies (a pass copied every Job, a twelfth
	// of its CPU with a thousand Jobs); what writes a Job changes a copy (setSuspend).
	if err := ctl.c.List(ctx, &jobs, client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	// Jobs are independent (each touches only itself and its own Workload): sync them
	// concurrently, so unsuspending hundreds of admitted Jobs is not one long queue of
	// round trips.
	var queued []*batchv1.Job
	for i := range jobs.Items {
		if job := ctl.queuedJob(&jobs.Items[i], wls); job != nil {
			queued = append(queued, job)
		}
	}
	each(len(queued), syncWorkers, func(i int) {
		job := queued[i]
		wl := wls(job.Namespace + "/" + WorkloadNameForJob(job.Name))
		if err := ctl.syncJob(ctx, job, wl, now); err != nil {
			ctl.log.Error(err, "sync job", "job", job.Namespace+"/"+job.Name)
		}
	})
	return nil
}

// queuedJob is the Job as Gantry queues it, nil when it is not Gantry's: one with a
// queue label, or (as Kueue does) an unlabelled one in a namespace with a LocalQueue
// named "default" that is not part of another queued job, then read as labelled with
// that queue (the object itself is left as it is; the webhook, where installed, labels
// it on create).
func (ctl *Controller) queuedJob(job *batchv1.Job, wls workloadLookup) *batchv1.Job {
	if job.DeletionTimestamp != nil {
		return nil
	}
	if JobQueueName(&job.ObjectMeta) != "" {
		return job
	}
	if partOfQueuedJob(job.OwnerReferences) {
		return nil
	}
	queue := ctl.queueOf(job.Namespace, job.Labels, wls(job.Namespace+"/"+WorkloadNameForJob(job.Name)))
	if queue == "" {
		return nil
	}
	labelled := job.DeepCopy()
	if labelled.Labels == nil {
		labelled.Labels = map[string]string{}
	}
	labelled.Labels[api.LabelKueueQueueName] = queue
	return labelled
}

func (ctl *Controller) syncJob(ctx context.Context, job *batchv1.Job, wl *v1alpha1.Workload, now time.Time) error {
	done, failed := JobFinished(job)
	if wl == nil {
		if done {
			return nil
		}
		want, err := WorkloadForJob(job)
		if err != nil {
			ctl.events.Eventf(job, "Warning", ReasonInvalid, "%v", err)
			return nil
		}
		if err := ctl.c.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create workload: %w", err)
		}
		return ctl.setSuspend(ctx, job, true, nil)
	}
	if meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished) {
		return nil
	}
	if done {
		return ctl.writeWorkloadStatus(ctx, wl, finishedStatus(wl.Status, failed, now))
	}
	run := wl.Status.Admission != nil
	return ctl.setSuspend(ctx, job, !run, wl)
}

// resumeJob unsuspends the Job of a Workload just admitted, so its controller creates
// the pods now rather than after the next pass's syncJobs (which would do the same).
// A failure is left to that pass.
func (ctl *Controller) resumeJob(ctx context.Context, wl *v1alpha1.Workload) {
	o := wl.Spec.Owner
	if o == nil || o.Kind != "Job" {
		return
	}
	var job batchv1.Job
	if err := ctl.c.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: o.Name}, &job); err != nil {
		return
	}
	if job.DeletionTimestamp != nil || ctl.queueOf(job.Namespace, job.Labels, wl) == "" {
		return
	}
	if err := ctl.setSuspend(ctx, &job, false, wl); err != nil {
		ctl.log.V(1).Info("resume job: left to the next pass", "job", job.Namespace+"/"+job.Name, "reason", err.Error())
	}
}

// setSuspend flips spec.suspend when it differs. Unsuspending is the start signal: the
// Job controller then creates the pods that the binder places. wl is the Job's Workload
// as the caller knows it (read from the cache when nil): a Workload just admitted may
// not be in the cache yet, and its admission sets the parallelism.
func (ctl *Controller) setSuspend(ctx context.Context, job *batchv1.Job, suspend bool, wl *v1alpha1.Workload) error {
	if ptr.Deref(job.Spec.Suspend, false) == suspend {
		return nil
	}
	patch := client.MergeFrom(job)
	job = job.DeepCopy() // job may be the informer's own (syncJobs)
	job.Spec.Suspend = ptr.To(suspend)
	ctl.fitParallelism(ctx, job, suspend, wl) // partial.go: parallelism follows a partial admission
	if err := ctl.c.Patch(ctx, job, patch); err != nil {
		return fmt.Errorf("set suspend=%v: %w", suspend, err)
	}
	return nil
}

// writeWorkloadStatus writes st unless it is already there.
func (ctl *Controller) writeWorkloadStatus(ctx context.Context, wl *v1alpha1.Workload, st v1alpha1.WorkloadStatus) error {
	if sameStatus(wl.Status, st) {
		return nil
	}
	upd := wl.DeepCopy()
	upd.Status = st
	if err := ctl.c.Status().Update(ctx, upd); err != nil {
		return fmt.Errorf("workload %s status: %w", wlKey(wl), err)
	}
	*wl = *upd
	return nil
}
