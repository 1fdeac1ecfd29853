package controller

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
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

// WorkloadForJob builds the Workload that represents job: one pod set "main" of
// parallelism pods (capped by completions), all of them one gang. The error names the
// job and field when the job cannot be represented.
func WorkloadForJob(job *batchv1.Job) (*v1alpha1.Workload, error) {
	queue := JobQueueName(&job.ObjectMeta)
	if queue == "" {
		return nil, fmt.Errorf("job %s/%s: metadata.labels: no %s or %s label", job.Namespace, job.Name,
			api.LabelGantryQueueName, api.LabelKueueQueueName)
	}
	count := ptr.Deref(job.Spec.Parallelism, 1)
	if c := job.Spec.Completions; c != nil && *c < count {
		count = *c
	}
	if count < 1 {
		return nil, fmt.Errorf("job %s/%s: spec.parallelism: %d pods: want at least 1", job.Namespace, job.Name, count)
	}
	tmpl := &job.Spec.Template
	ps := v1alpha1.PodSet{
		Name:         "main",
		Count:        count,
		Requests:     PodRequests(&tmpl.Spec),
		ContainerGPU: api.ContainerGPU(&tmpl.Spec),
		NodeSelector: tmpl.Spec.NodeSelector,
		Tolerations:  tmpl.Spec.Tolerations,
	}
	if a := tmpl.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		ps.NodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	ps.TopologyRequest = topologyFromAnnotations(tmpl.Annotations)
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name:        WorkloadNameForJob(job.Name),
			Namespace:   job.Namespace,
			Labels:      map[string]string{LabelJobKind: "Job"},
			Annotations: carriedAnnotations(job.Annotations),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: v1alpha1.WorkloadSpec{
			QueueName:         queue,
			PodSets:           []v1alpha1.PodSet{ps},
			PriorityClassName: jobPriorityClass(job),
			Owner:             &v1alpha1.WorkloadOwner{APIVersion: "batch/v1", Kind: "Job", Name: job.Name},
		},
	}
	if s := job.Labels[api.LabelKueueMaxExecTime]; s != "" {
		var secs int32
		if _, err := fmt.Sscanf(s, "%d", &secs); err != nil || secs < 1 {
			return nil, fmt.Errorf("job %s/%s: metadata.labels[%s]: %q is not a positive number of seconds",
				job.Namespace, job.Name, api.LabelKueueMaxExecTime, s)
		}
		wl.Spec.MaximumExecutionTimeSeconds = &secs
	}
	return wl, nil
}

// jobPriorityClass prefers Kueue's workload priority label over the pod's class.
func jobPriorityClass(job *batchv1.Job) string {
	if c := job.Labels[api.LabelKueuePriority]; c != "" {
		return c
	}
	return job.Spec.Template.Spec.PriorityClassName
}

// topologyFromAnnotations reads Kueue's pod-template topology annotations.
func topologyFromAnnotations(ann map[string]string) *v1alpha1.PodSetTopologyRequest {
	var tr v1alpha1.PodSetTopologyRequest
	set := false
	if v := ann[api.AnnotationRequiredTopology]; v != "" {
		tr.Required, set = ptr.To(v), true
	}
	if v := ann[api.AnnotationPreferredTopology]; v != "" {
		tr.Preferred, set = ptr.To(v), true
	}
	if v := ann[api.AnnotationSliceRequiredTopology]; v != "" {
		tr.PodSetSliceRequiredTopology, set = ptr.To(v), true
	}
	if v := ann[api.AnnotationSliceSize]; v != "" {
		var n int32
		if _, err := fmt.Sscanf(v, "%d", &n); err == nil && n > 0 {
			tr.PodSetSliceSize, set = ptr.To(n), true
		}
	}
	if !set {
		return nil
	}
	return &tr
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
