package k8s

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// JobWrapper builds a batch/v1 Job of one container "main". Quantities are kept as
// written, so YAML can carry values that do not parse.
type JobWrapper struct {
	ns, name            string
	labels, annotations map[string]string
	parallelism         int32
	completions         *int32
	requests, limits    map[string]string
}

// MakeJob starts a Job of one pod.
func MakeJob(ns, name string) *JobWrapper {
	return &JobWrapper{ns: ns, name: name, parallelism: 1}
}

// Queue names its LocalQueue with Gantry's label, KueueQueue with Kueue's.
func (j *JobWrapper) Queue(q string) *JobWrapper { return j.Label(api.LabelGantryQueueName, q) }
func (j *JobWrapper) KueueQueue(q string) *JobWrapper {
	return j.Label(api.LabelKueueQueueName, q)
}

// Priority names its WorkloadPriorityClass.
func (j *JobWrapper) Priority(class string) *JobWrapper {
	return j.Label(api.LabelKueuePriority, class)
}

// Label and Annotate set metadata.
func (j *JobWrapper) Label(k, v string) *JobWrapper    { set(&j.labels, k, v); return j }
func (j *JobWrapper) Annotate(k, v string) *JobWrapper { set(&j.annotations, k, v); return j }

// Pods runs n pods at once, n in all; Parallelism sets only how many at once.
func (j *JobWrapper) Pods(n int32) *JobWrapper {
	j.parallelism, j.completions = n, ptr.To(n)
	return j
}
func (j *JobWrapper) Parallelism(n int32) *JobWrapper { j.parallelism = n; return j }

// Request and Limit set the container's resources ("2", "1.5Gi").
func (j *JobWrapper) Request(name, q string) *JobWrapper { set(&j.requests, name, q); return j }
func (j *JobWrapper) Limit(name, q string) *JobWrapper   { set(&j.limits, name, q); return j }

// GPUs sets an nvidia.com/gpu limit, the way users ask for extended resources.
func (j *JobWrapper) GPUs(n string) *JobWrapper { return j.Limit("nvidia.com/gpu", n) }

// Obj builds the Job as Gantry's controller expects it submitted: suspended (Gantry
// unsuspends it on admission), completions = parallelism unless Pods said otherwise,
// pods for scheduler gantry and never restarted. It panics on a bad quantity.
func (j *JobWrapper) Obj() *batchv1.Job {
	completions := j.parallelism
	if j.completions != nil {
		completions = *j.completions
	}
	labels := copyMap(j.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: j.ns, Labels: labels, Annotations: copyMap(j.annotations)},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), Parallelism: ptr.To(j.parallelism), Completions: ptr.To(completions),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				SchedulerName: SchedulerName, RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "main", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: quantities(j.requests), Limits: quantities(j.limits)}}},
			}},
		},
	}
}

func quantities(m map[string]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k, q := range m {
		out[corev1.ResourceName(k)] = resource.MustParse(q)
	}
	return out
}

// YAML renders the Job as users write it for the simulator: metadata, parallelism
// (completions when set) and the container's resources. What Obj adds for a cluster
// (suspend, schedulerName, restartPolicy) is not in it.
func (j *JobWrapper) YAML() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: batch/v1\nkind: Job\nmetadata:\n  namespace: %s\n  name: %s\n", j.ns, j.name)
	writeMap(&s, "  labels", j.labels, "    ")
	writeMap(&s, "  annotations", j.annotations, "    ")
	fmt.Fprintf(&s, "spec:\n  parallelism: %d\n", j.parallelism)
	if j.completions != nil {
		fmt.Fprintf(&s, "  completions: %d\n", *j.completions)
	}
	s.WriteString("  template:\n    spec:\n      containers:\n      - name: main\n        image: busybox\n        resources:\n")
	writeMap(&s, "          requests", j.requests, "            ")
	writeMap(&s, "          limits", j.limits, "            ")
	return s.String()
}
