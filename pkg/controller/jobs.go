package controller

import (
	"fmt"
	"math"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// JobQueueName is the queue a Job asks for through Gantry's or Kueue's label; "" when
// the Job is not Gantry's to manage.
func JobQueueName(meta *metav1.ObjectMeta) string {
	if q := meta.Labels[api.LabelGantryQueueName]; q != "" {
		return q
	}
	return meta.Labels[api.LabelKueueQueueName]
}

// WorkloadNameForJob is the name of the Workload that represents a Job.
func WorkloadNameForJob(jobName string) string { return "job-" + jobName }

// WorkloadForJob builds the Workload that represents job: the pod set "main" of
// parallelism pods (capped by completions), read by the loader's own Job reader
// (workloadFromModel). The error names the job and field when the job cannot be
// represented.
func WorkloadForJob(job *batchv1.Job) (*v1alpha1.Workload, error) {
	if err := needQueue("Job", &job.ObjectMeta); err != nil {
		return nil, err
	}
	m, err := manifest.WorkloadOfJob(objectSource, job)
	if err != nil {
		return nil, err
	}
	return workloadFromModel("batch/v1", "Job", &job.ObjectMeta, m)
}

// objectSource names the cluster as the source in the shared reader's errors.
const objectSource = "cluster"

// needQueue refuses a job object that names no queue: it is not Gantry's to manage.
func needQueue(kind string, om *metav1.ObjectMeta) error {
	if JobQueueName(om) == "" {
		return fmt.Errorf("%s %s/%s: metadata.labels: no %s or %s label", kind, om.Namespace, om.Name,
			api.LabelGantryQueueName, api.LabelKueueQueueName)
	}
	return nil
}

// workloadFromModel builds the Workload object of a job object from what the shared
// reader made of it (m): its pod sets, gang size, priority class and runtime limit. The
// queue is the LocalQueue the job's label names (JobQueueName).
func workloadFromModel(apiVersion, kind string, om *metav1.ObjectMeta, m *api.Workload) (*v1alpha1.Workload, error) {
	where := fmt.Sprintf("%s %s/%s", kind, om.Namespace, om.Name)
	sets := make([]v1alpha1.PodSet, 0, len(m.PodSets))
	for _, ps := range m.PodSets {
		// The simulator runs an empty pod set as nothing; a Workload object cannot hold one.
		if ps.Count < 1 {
			return nil, fmt.Errorf("%s: pod set %q: %d pods: want at least 1", where, ps.Name, ps.Count)
		}
		sets = append(sets, fromAPIPodSet(ps))
	}
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name: WorkloadNameFor(kind, om.Name), Namespace: om.Namespace,
			Labels: map[string]string{LabelJobKind: kind}, Annotations: carriedAnnotations(om.Annotations, m.MinMember),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: om.Name,
				UID: om.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: v1alpha1.WorkloadSpec{QueueName: JobQueueName(om), PodSets: sets, PriorityClassName: m.PriorityClass,
			Owner: &v1alpha1.WorkloadOwner{APIVersion: apiVersion, Kind: kind, Name: om.Name}},
	}
	if err := withPodClaims(wl, m.PodSets); err != nil { // dra_workload.go
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if m.MaxRuntime > 0 {
		secs := int64(m.MaxRuntime / time.Second)
		if secs > math.MaxInt32 {
			return nil, fmt.Errorf("%s: metadata.labels[%s]: %d seconds is more than a Workload holds (%d)",
				where, api.LabelKueueMaxExecTime, secs, math.MaxInt32)
		}
		wl.Spec.MaximumExecutionTimeSeconds = ptr.To(int32(secs))
	}
	return wl, nil
}

// JobFinished reports whether the Job completed or failed, and which.
func JobFinished(job *batchv1.Job) (done, failed bool) {
	for _, c := range job.Status.Conditions {
		if c.Status != "True" {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete, batchv1.JobSuccessCriteriaMet:
			return true, false
		case batchv1.JobFailed, batchv1.JobFailureTarget:
			return true, true
		}
	}
	return false, false
}
