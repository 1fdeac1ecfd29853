package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WorkloadNameFor is the Workload name of a job object of the given kind.
func WorkloadNameFor(kind, name string) string {
	if kind == "Job" {
		return WorkloadNameForJob(name)
	}
	return strings.ToLower(kind) + "-" + name
}

// WorkloadForObject builds the Workload of a job object handled through unstructured.
func WorkloadForObject(k jobKind, u *unstructured.Unstructured) (*v1alpha1.Workload, error) {
	om := metav1.ObjectMeta{Labels: u.GetLabels()}
	queue := JobQueueName(&om)
	if queue == "" {
		return nil, fmt.Errorf("%s %s/%s: metadata.labels: no queue-name label", k.GVK.Kind, u.GetNamespace(), u.GetName())
	}
	sets, err := k.PodSets(u)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", k.GVK.Kind, u.GetNamespace(), u.GetName(), err)
	}
	apiVersion := k.GVK.GroupVersion().String()
	return &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name: WorkloadNameFor(k.GVK.Kind, u.GetName()), Namespace: u.GetNamespace(),
			Labels: map[string]string{LabelJobKind: k.GVK.Kind}, Annotations: carriedAnnotations(u.GetAnnotations()),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: apiVersion, Kind: k.GVK.Kind, Name: u.GetName(),
				UID: u.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: v1alpha1.WorkloadSpec{QueueName: queue, PodSets: sets,
			PriorityClassName: u.GetLabels()["kueue.x-k8s.io/priority-class"],
			Owner:             &v1alpha1.WorkloadOwner{APIVersion: apiVersion, Kind: k.GVK.Kind, Name: u.GetName()}},
	}, nil
}

// syncKinds does for every watched unstructured kind what syncJobs does for Jobs,
// reading them from the informer cache. A kind whose CRD is not installed is not
// watched and skipped without a word; one installed later is watched from the next
// resync on.
func (ctl *Controller) syncKinds(ctx context.Context, wls workloadLookup, now time.Time) {
	for _, k := range jobKinds() {
		if !ctl.watch.watching(k.GVK.String()) {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := ctl.watch.informers.List(ctx, list); err != nil {
			ctl.log.Error(err, "list", "kind", k.GVK.Kind)
			continue
		}
		for i := range list.Items {
			u := &list.Items[i]
			if JobQueueName(&metav1.ObjectMeta{Labels: u.GetLabels()}) == "" || u.GetDeletionTimestamp() != nil {
				continue
			}
			wl := wls(u.GetNamespace() + "/" + WorkloadNameFor(k.GVK.Kind, u.GetName()))
			if err := ctl.syncObject(ctx, k, u, wl, now); err != nil {
				ctl.log.Error(err, "sync", "kind", k.GVK.Kind, "object", u.GetNamespace()+"/"+u.GetName())
			}
		}
	}
}

func (ctl *Controller) syncObject(ctx context.Context, k jobKind, u *unstructured.Unstructured, wl *v1alpha1.Workload, now time.Time) error {
	done, failed := k.Finished(u)
	if wl == nil {
		if done {
			return nil
		}
		want, err := WorkloadForObject(k, u)
		if err != nil {
			ctl.events.Eventf(u, "Warning", ReasonInvalid, "%v", err)
			return nil
		}
		if err := ctl.c.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create workload: %w", err)
		}
		return ctl.setObjectSuspend(ctx, k, u, true)
	}
	if meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished) {
		return nil
	}
	if done {
		return ctl.writeWorkloadStatus(ctx, wl, finishedStatus(wl.Status, failed, now))
	}
	return ctl.setObjectSuspend(ctx, k, u, wl.Status.Admission == nil)
}

// setObjectSuspend flips the kind's suspend field with a merge patch.
func (ctl *Controller) setObjectSuspend(ctx context.Context, k jobKind, u *unstructured.Unstructured, suspend bool) error {
	cur, _, _ := unstructured.NestedBool(u.Object, k.SuspendPath...)
	if cur == suspend {
		return nil
	}
	patch := client.MergeFrom(u.DeepCopy())
	if err := unstructured.SetNestedField(u.Object, suspend, k.SuspendPath...); err != nil {
		return err
	}
	if err := ctl.c.Patch(ctx, u, patch); err != nil {
		return fmt.Errorf("set %s=%v: %w", strings.Join(k.SuspendPath, "."), suspend, err)
	}
	return nil
}
