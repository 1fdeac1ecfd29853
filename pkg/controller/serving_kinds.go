package controller

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// servingWant is one Workload a serving object should have. create is false for the
// Workload of a pod already going away: kept while it exists, never made anew.
type servingWant struct {
	wl     *v1alpha1.Workload
	create bool
}

// maxServingGroups bounds the groups of one LeaderWorkerSet Gantry makes Workloads for,
// as the loader bounds them (a typo of a few digits is not a million Workloads).
const maxServingGroups = 10000

// deploymentWorkloads: one Workload per pod of the Deployment's ReplicaSets that has
// not ended, read from the pod's own labels, annotations and spec in place of the
// template (during a rollout the old pods run the old template).
func deploymentWorkloads(o servingObject, pods []*corev1.Pod) ([]servingWant, error) {
	var out []servingWant
	for _, p := range pods {
		if deploymentOfPod(p) != o.u.GetName() || podEnded(p) || p.Spec.SchedulerName != SchedulerName {
			continue
		}
		obj := o.u.DeepCopy()
		// The queue comes from the Deployment (or its current template), not from a pod
		// made before the label was added.
		withTemplateQueue(obj, o.kind.Templates)
		tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: p.Annotations}, Spec: p.Spec})
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		if err := setReplicas(obj, 1); err != nil {
			return nil, err
		}
		if err := unstructured.SetNestedField(obj.Object, tmpl, "spec", "template"); err != nil {
			return nil, err
		}
		wl, err := servingWorkload(o, obj, WorkloadNameFor(KindServingPod, p.Name),
			v1alpha1.WorkloadOwner{APIVersion: "v1", Kind: KindServingPod, Name: p.Name},
			metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: ptr.To(true)})
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		out = append(out, servingWant{wl: wl, create: p.DeletionTimestamp == nil})
	}
	return out, nil
}

// statefulSetWorkloads: the whole set is one gang of `replicas` pods (default 1); a set
// scaled to zero has none.
func statefulSetWorkloads(o servingObject, _ []*corev1.Pod) ([]servingWant, error) {
	n, err := replicasOfObject(o.u)
	if err != nil || n == 0 {
		return nil, err
	}
	wl, err := servingWorkload(o, o.u.DeepCopy(), WorkloadNameFor(KindStatefulSet, o.u.GetName()),
		v1alpha1.WorkloadOwner{APIVersion: "apps/v1", Kind: KindStatefulSet, Name: o.u.GetName()}, controllerRef(o))
	if err != nil {
		return nil, err
	}
	return []servingWant{{wl: wl, create: true}}, nil
}

// lwsWorkloads: each of the `replicas` groups (default 1) is a gang of its own, read
// once (the reader of a one-group copy) and named per group.
func lwsWorkloads(o servingObject, _ []*corev1.Pod) ([]servingWant, error) {
	n, err := replicasOfObject(o.u)
	if err != nil || n == 0 {
		return nil, err
	}
	if n > maxServingGroups {
		return nil, fmt.Errorf("spec.replicas: %d groups: Gantry makes Workloads for at most %d groups of one LeaderWorkerSet", n, maxServingGroups)
	}
	obj := o.u.DeepCopy()
	if err := setReplicas(obj, 1); err != nil {
		return nil, err
	}
	name := o.u.GetName()
	first, err := servingWorkload(o, obj, "", v1alpha1.WorkloadOwner{}, controllerRef(o))
	if err != nil {
		return nil, err
	}
	out := make([]servingWant, 0, n)
	for g := int64(0); g < n; g++ {
		group := lwsGroupName(name, strconv.FormatInt(g, 10))
		wl := first.DeepCopy()
		wl.Name = WorkloadNameFor(KindLeaderWorkerSet, group)
		wl.Spec.Owner = &v1alpha1.WorkloadOwner{APIVersion: manifest.LWSAPIVersion, Kind: KindLeaderWorkerSet, Name: group}
		out = append(out, servingWant{wl: wl, create: true})
	}
	return out, nil
}

// servingWorkload reads obj (a copy of the serving object, shaped to describe one
// Workload) with the shared reader and names the Workload, its owner as it records
// it (podsOf finds the pods under it) and its owner reference (the garbage collector
// deletes the Workload with it).
func servingWorkload(o servingObject, obj *unstructured.Unstructured, name string, owner v1alpha1.WorkloadOwner, ref metav1.OwnerReference) (*v1alpha1.Workload, error) {
	obj.SetGroupVersionKind(o.kind.GVK) // an informer's list may leave the kind out
	withTemplateQueue(obj, o.kind.Templates)
	m, err := manifest.WorkloadOfObject(objectSource, obj.Object)
	if err != nil {
		return nil, err
	}
	om := metav1.ObjectMeta{Name: obj.GetName(), Namespace: obj.GetNamespace(), UID: obj.GetUID(),
		Labels: obj.GetLabels(), Annotations: obj.GetAnnotations()}
	wl, err := workloadFromModel(o.kind.GVK.GroupVersion().String(), o.kind.GVK.Kind, &om, m)
	if err != nil {
		return nil, err
	}
	wl.Name = name
	wl.Spec.Owner = &owner
	wl.OwnerReferences = []metav1.OwnerReference{ref}
	if wl.Annotations == nil {
		wl.Annotations = map[string]string{}
	}
	wl.Annotations[AnnotationServingOwner] = o.ownerKey()
	return wl, nil
}

// controllerRef is the owner reference of a Workload the serving object controls.
func controllerRef(o servingObject) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: o.kind.GVK.GroupVersion().String(), Kind: o.kind.GVK.Kind,
		Name: o.u.GetName(), UID: o.u.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// servingQueueLabels are the labels Kueue's webhooks copy from a serving object onto its
// pod templates; read back from a template when the object itself has none.
var servingQueueLabels = []string{api.LabelGantryQueueName, api.LabelKueueQueueName, api.LabelKueuePriority}

// withTemplateQueue gives obj the queue (and workload priority) labels of its first pod
// template that has a queue label, where obj has no queue label of its own.
func withTemplateQueue(obj *unstructured.Unstructured, templates [][]string) {
	labels := obj.GetLabels()
	if JobQueueName(&metav1.ObjectMeta{Labels: labels}) != "" {
		return
	}
	for _, path := range templates {
		tl, _, _ := unstructured.NestedStringMap(obj.Object, append(append([]string{}, path...), "metadata", "labels")...)
		if JobQueueName(&metav1.ObjectMeta{Labels: tl}) == "" {
			continue
		}
		if labels == nil {
			labels = map[string]string{}
		}
		for _, k := range servingQueueLabels {
			if v, ok := tl[k]; ok {
				if _, own := labels[k]; !own {
					labels[k] = v
				}
			}
		}
		obj.SetLabels(labels)
		return
	}
}

// servingQueue is the queue a serving object asks for, on itself or a pod template.
func servingQueue(o servingObject) string {
	if q := JobQueueName(&metav1.ObjectMeta{Labels: o.u.GetLabels()}); q != "" {
		return q
	}
	for _, path := range o.kind.Templates {
		tl, _, _ := unstructured.NestedStringMap(o.u.Object, append(append([]string{}, path...), "metadata", "labels")...)
		if q := JobQueueName(&metav1.ObjectMeta{Labels: tl}); q != "" {
			return q
		}
	}
	return ""
}

// templatesNotGantry names the first pod template of o whose pods would not have Gantry
// as their scheduler ("" when all would): they would be placed by another scheduler,
// outside quota, so Gantry makes no Workload for them. A template names Gantry, or,
// where this controller serves the pod webhook (podWebhook), names no scheduler (or the
// default one) and carries a queue label, so the webhook sees its pods and sets Gantry.
func templatesNotGantry(o servingObject, podWebhook bool) string {
	for _, path := range o.kind.Templates {
		t, found, _ := unstructured.NestedMap(o.u.Object, path...)
		if !found || t == nil {
			continue // an optional template (a LeaderWorkerSet's leader)
		}
		s, _, _ := unstructured.NestedString(t, "spec", "schedulerName")
		if s != SchedulerName && !(podWebhook && (s == "" || s == corev1.DefaultSchedulerName) && templateQueued(t)) {
			return strings.Join(path, ".") + ".spec.schedulerName"
		}
	}
	return ""
}

// templateQueued reports whether a pod template carries a queue label, as the pods
// made from it will (the pod webhook's object selector picks them by it).
func templateQueued(t map[string]any) bool {
	labels, _, _ := unstructured.NestedStringMap(t, "metadata", "labels")
	return JobQueueName(&metav1.ObjectMeta{Labels: labels}) != ""
}

// replicasOfObject reads spec.replicas (default 1), refusing a negative count.
func replicasOfObject(u *unstructured.Unstructured) (int64, error) {
	n, found, err := unstructured.NestedInt64(u.Object, "spec", "replicas")
	switch {
	case err != nil:
		return 0, fmt.Errorf("spec.replicas: %w", err)
	case !found:
		return 1, nil
	case n < 0:
		return 0, fmt.Errorf("spec.replicas: %d is negative", n)
	}
	return n, nil
}

func setReplicas(u *unstructured.Unstructured, n int64) error {
	if err := unstructured.SetNestedField(u.Object, n, "spec", "replicas"); err != nil {
		return fmt.Errorf("spec.replicas: %w", err)
	}
	return nil
}

// podEnded reports whether a pod has run to its end (it holds nothing any more).
func podEnded(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
