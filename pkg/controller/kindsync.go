package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WorkloadNameFor is the Workload name of a job object of the given kind.
func WorkloadNameFor(kind, name string) string {
	if kind == "Job" {
		return WorkloadNameForJob(name)
	}
	return strings.ToLower(kind) + "-" + name
}

// WorkloadForObject builds the Workload of a job object handled through unstructured:
// its pod sets are what the loader's reader of the same kind makes of it
// (manifest.WorkloadOfObject).
func WorkloadForObject(k jobKind, u *unstructured.Unstructured) (*v1alpha1.Workload, error) {
	om := metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
		Labels: u.GetLabels(), Annotations: u.GetAnnotations()}
	if err := needQueue(k.GVK.Kind, &om); err != nil {
		return nil, err
	}
	obj := u.Object
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		// A typed client's list may leave the items' TypeMeta out; the kind is known.
		cp := u.DeepCopy()
		cp.SetGroupVersionKind(k.GVK)
		obj = cp.Object
	}
	m, err := manifest.WorkloadOfObject(objectSource, obj)
	if err != nil {
		return nil, err
	}
	return workloadFromModel(k.GVK.GroupVersion().String(), k.GVK.Kind, &om, m)
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
