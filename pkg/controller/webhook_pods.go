package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// WebhookPathPod is the pod webhook's path: a pod of a queued Deployment, StatefulSet
// or LeaderWorkerSet gets schedulerName gantry on create, as users of Kueue's pod
// integration expect of a queued pod: they need not write it in the pod template.
const WebhookPathPod = "/mutate--v1-pod"

// podScheduler names Gantry as the scheduler of queued serving pods on create. A pod
// counts as queued when it carries a queue label itself (the Deployment's or
// LeaderWorkerSet's pod template propagates it) or when the serving object that owns
// it carries one (servingQueue, the rule the serving sync reads: on the object or on
// one of its pod templates). Only pods of a serving kind (servingGangOf) are touched:
// Gantry makes no Workload for a lone pod, which would wait for Gantry for ever. A pod
// that names another scheduler is left alone.
type podScheduler struct {
	// owners reads the owning objects (an uncached reader: the webhook answers on
	// every replica, leader or not, and must not wait for informers).
	owners client.Reader
}

var _ admission.CustomDefaulter = podScheduler{}

func (s podScheduler) Default(ctx context.Context, obj runtime.Object) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return fmt.Errorf("webhook %s: got %T, want a Pod", WebhookPathPod, obj)
	}
	if name := pod.Spec.SchedulerName; name != "" && name != corev1.DefaultSchedulerName {
		return nil // gantry already, or another scheduler the user chose
	}
	kind, _ := servingGangOf(pod)
	if kind == "" {
		return nil
	}
	queued := JobQueueName(&pod.ObjectMeta) != ""
	if !queued {
		var err error
		if queued, err = s.ownerQueued(ctx, pod, kind); err != nil {
			return err
		}
	}
	if queued {
		pod.Spec.SchedulerName = SchedulerName
	}
	return nil
}

// ownerQueued reads the serving object owning pod (of gang kind) and reports whether
// it asks for a queue. An owner that is gone, or whose API is not served, is not queued.
func (s podScheduler) ownerQueued(ctx context.Context, pod *corev1.Pod, kind string) (bool, error) {
	if s.owners == nil {
		return false, nil
	}
	var owner string
	gvk := deploymentGVK
	switch kind {
	case KindServingPod:
		owner = deploymentOfPod(pod)
	case KindStatefulSet:
		if ref := metav1.GetControllerOf(pod); ref != nil {
			owner = ref.Name
		}
		gvk = statefulSetGVK
	case KindLeaderWorkerSet:
		owner, gvk = pod.Labels[lwsNameLabel], lwsGVK
	}
	ns := podNamespace(ctx, pod)
	if owner == "" || ns == "" {
		return false, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := s.owners.Get(ctx, client.ObjectKey{Namespace: ns, Name: owner}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return false, nil
		}
		return false, fmt.Errorf("webhook %s: pod %s/%s: reading its %s %s: %w", WebhookPathPod, ns, podName(pod), gvk.Kind, owner, err)
	}
	for _, k := range servingKinds() {
		if k.GVK == gvk {
			return servingQueue(servingObject{kind: k, u: u}) != "", nil
		}
	}
	return false, nil
}

// podNamespace is the pod's namespace, from the admission request when the object
// leaves it out (a create through the namespace's URL).
func podNamespace(ctx context.Context, pod *corev1.Pod) string {
	if pod.Namespace != "" {
		return pod.Namespace
	}
	if req, err := admission.RequestFromContext(ctx); err == nil {
		return req.Namespace
	}
	return ""
}

// podName is the pod's name, or its generateName prefix before the API server named it.
func podName(pod *corev1.Pod) string {
	if pod.Name != "" {
		return pod.Name
	}
	return pod.GenerateName
}
