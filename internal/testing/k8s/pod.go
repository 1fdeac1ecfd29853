package k8s

import (
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWrapper builds a corev1.Pod for Gantry's scheduler: one container "main" with no
// requests, pending, created at the tests' epoch.
type PodWrapper struct{ p corev1.Pod }

// MakePod starts pod ns/name, whose UID is "uid-<name>".
func MakePod(ns, name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), CreationTimestamp: metav1.NewTime(gt.Epoch())},
		Spec: corev1.PodSpec{SchedulerName: SchedulerName, Containers: []corev1.Container{{Name: "main", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}}
}

// Queue names its LocalQueue with Gantry's label.
func (p *PodWrapper) Queue(q string) *PodWrapper { return p.Label(api.LabelGantryQueueName, q) }

// Gang makes it one of size pods of the gang name (Gantry's annotations).
func (p *PodWrapper) Gang(name, size string) *PodWrapper {
	return p.Annotate(api.AnnotationGangName, name).Annotate(api.AnnotationGangSize, size)
}

// PodGroup makes it a member of Volcano PodGroup name.
func (p *PodWrapper) PodGroup(name string) *PodWrapper {
	return p.Annotate(api.AnnotationVolcanoGroupName, name)
}

// Label and Annotate set metadata.
func (p *PodWrapper) Label(k, v string) *PodWrapper    { set(&p.p.Labels, k, v); return p }
func (p *PodWrapper) Annotate(k, v string) *PodWrapper { set(&p.p.Annotations, k, v); return p }

// GPUs asks for n whole GPUs; Resource for any extended resource (request = limit, as
// Kubernetes requires of them).
func (p *PodWrapper) GPUs(n string) *PodWrapper { return p.Resource("nvidia.com/gpu", n) }
func (p *PodWrapper) Resource(name, q string) *PodWrapper {
	c := &p.p.Spec.Containers[0]
	c.Resources.Requests[corev1.ResourceName(name)] = resource.MustParse(q)
	c.Resources.Limits[corev1.ResourceName(name)] = resource.MustParse(q)
	return p
}

// On binds it to node; Phase sets its phase.
func (p *PodWrapper) On(node string) *PodWrapper           { p.p.Spec.NodeName = node; return p }
func (p *PodWrapper) Phase(ph corev1.PodPhase) *PodWrapper { p.p.Status.Phase = ph; return p }

// Age makes it created d before the epoch.
func (p *PodWrapper) Age(d time.Duration) *PodWrapper {
	p.p.CreationTimestamp = metav1.NewTime(gt.Epoch().Add(-d))
	return p
}

// Obj returns a copy of the pod.
func (p *PodWrapper) Obj() *corev1.Pod { return p.p.DeepCopy() }
