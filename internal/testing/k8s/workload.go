package k8s

import (
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadWrapper builds a Gantry Workload object.
type WorkloadWrapper struct{ w v1alpha1.Workload }

// MakeWorkload starts Workload ns/name in LocalQueue "lq": one pod asking for one GPU.
func MakeWorkload(ns, name string) *WorkloadWrapper {
	return &WorkloadWrapper{v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.WorkloadSpec{QueueName: "lq", PodSets: []v1alpha1.PodSet{{Name: "main", Count: 1,
			Requests: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}},
	}}
}

// Annotate sets an annotation.
func (w *WorkloadWrapper) Annotate(k, v string) *WorkloadWrapper {
	set(&w.w.Annotations, k, v)
	return w
}

// Admitted marks it admitted by ClusterQueue cq, with no placements (no node needed).
func (w *WorkloadWrapper) Admitted(cq string) *WorkloadWrapper {
	w.w.Status.Admission = &v1alpha1.Admission{ClusterQueue: cq}
	return w
}

// Obj returns a copy of the Workload, by value as lists of them hold it.
func (w *WorkloadWrapper) Obj() v1alpha1.Workload { return *w.w.DeepCopy() }
