package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
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
	return workloadWith(k, u, func(obj map[string]any) (*api.Workload, error) {
		return manifest.WorkloadOfObject(objectSource, obj)
	})
}

// workloadForObject is WorkloadForObject with the kind's own conversion where it has
// one (jobKind.Convert), which reads the objects it needs besides u from r.
func workloadForObject(ctx context.Context, r client.Reader, k jobKind, u *unstructured.Unstructured) (*v1alpha1.Workload, error) {
	if k.Convert == nil {
		return WorkloadForObject(k, u)
	}
	return workloadWith(k, u, func(obj map[string]any) (*api.Workload, error) { return k.Convert(ctx, r, obj) })
}

// workloadWith builds the Workload of u from what convert makes of its content.
func workloadWith(k jobKind, u *unstructured.Unstructured, convert func(map[string]any) (*api.Workload, error)) (*v1alpha1.Workload, error) {
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
	m, err := convert(obj)
	if err != nil {
		return nil, err
	}
	return workloadFromModel(k.GVK.GroupVersion().String(), k.GVK.Kind, &om, m)
}

// syncKinds does for every watched unstructured kind what syncJobs does for Jobs,
// reading them from the informer cache. A kind whose CRD is not installed is not
// watched and skipped without a word; one installed later is watched from the next
// resync on. A kind served under two versions (MPIJob: the training-operator's v1, the
// MPI operator's v2beta1) is synced under the first one watched.
func (ctl *Controller) syncKinds(ctx context.Context, wls workloadLookup, now time.Time) {
	synced := map[string]bool{}
	for _, k := range jobKinds() {
		if !ctl.watch.watching(k.GVK.String()) || synced[k.GVK.Kind] {
			continue
		}
		synced[k.GVK.Kind] = true
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := ctl.watch.informers.List(ctx, list); err != nil {
			ctl.log.Error(err, "list", "kind", k.GVK.Kind)
			continue
		}
		for i := range list.Items {
			u := &list.Items[i]
			// Part of a job Gantry queues (a TrainJob's JobSet, a RayJob's RayCluster):
			// the owner is the workload, whatever labels its operator copied down.
			if u.GetDeletionTimestamp() != nil || k.Unqueued != nil && k.Unqueued(u) || partOfQueuedJob(u.GetOwnerReferences()) {
				continue
			}
			wl := wls(u.GetNamespace() + "/" + WorkloadNameFor(k.GVK.Kind, u.GetName()))
			queue := ctl.queueOf(u.GetNamespace(), u.GetLabels(), wl)
			if queue == "" {
				continue // not Gantry's
			}
			if err := ctl.syncObject(ctx, k, u, queue, wl, now); err != nil {
				ctl.log.Error(err, "sync", "kind", k.GVK.Kind, "object", u.GetNamespace()+"/"+u.GetName())
			}
		}
	}
	ctl.syncServing(ctx, now) // serving_sync.go: the kinds without a suspend switch
}

// queueOf is the LocalQueue a job object (not part of another job: partOfQueuedJob) is
// queued in: the one its queue label names; else, for an object with no label, the one
// its Workload was made for; else LocalQueue "default" of its namespace when that exists
// (Kueue's LocalQueueDefaulting, the loader's rule: manifest.DefaultLocalQueue). "" when
// the object is not Gantry's.
func (ctl *Controller) queueOf(ns string, labels map[string]string, wl *v1alpha1.Workload) string {
	if q := JobQueueName(&metav1.ObjectMeta{Labels: labels}); q != "" {
		return q
	}
	if wl != nil {
		return wl.Spec.QueueName
	}
	if !ctl.cache.hasLocalQueue(ns, manifest.DefaultLocalQueue) {
		return ""
	}
	return manifest.DefaultLocalQueue
}

// partOfQueuedJob reports whether an object's controller is a job of a kind Gantry
// queues (a JobSet of a TrainJob, a Job of a JobSet or of a RayJob): the owner is the
// one queued, so the default LocalQueue does not take its parts too.
func partOfQueuedJob(refs []metav1.OwnerReference) bool {
	for _, r := range refs {
		if r.Controller == nil || !*r.Controller {
			continue
		}
		if r.APIVersion == "batch/v1" && r.Kind == "Job" {
			return true
		}
		if _, ok := jobKindOf(r.APIVersion, r.Kind); ok {
			return true
		}
	}
	return false
}

// hasLocalQueue reports whether LocalQueue ns/name exists, gantry.dev's or Kueue's.
func (c *stateCache) hasLocalQueue(ns, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := ns + "/" + name
	if _, ok := c.queues.lqs.get(key); ok {
		return true
	}
	_, ok := c.queues.kueue.items.get(kueueKey("LocalQueue", key))
	return ok
}

// withQueueLabel is u, or a copy of it labelled with queue when it names none (the
// default LocalQueue), so its Workload is made for that queue; u itself is not changed.
func withQueueLabel(u *unstructured.Unstructured, queue string) *unstructured.Unstructured {
	if JobQueueName(&metav1.ObjectMeta{Labels: u.GetLabels()}) != "" {
		return u
	}
	cp := u.DeepCopy()
	labels := cp.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.LabelKueueQueueName] = queue
	cp.SetLabels(labels)
	return cp
}

func (ctl *Controller) syncObject(ctx context.Context, k jobKind, u *unstructured.Unstructured, queue string, wl *v1alpha1.Workload, now time.Time) error {
	done, failed := k.Finished(u)
	if wl == nil {
		if done {
			return nil
		}
		want, err := workloadForObject(ctx, ctl.watch.informers, k, withQueueLabel(u, queue))
		var missing *relatedMissingError
		if errors.As(err, &missing) {
			// Pending, not invalid: held back until what it names is there.
			ctl.events.Eventf(u, "Warning", ReasonRuntimeNotFound, "%v", err)
			return ctl.setObjectSuspend(ctx, k, u, true)
		}
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
	if dropped, err := ctl.refreshPending(ctx, k, u, queue, wl); dropped || err != nil {
		return err // trainjob.go: made again on the next pass
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
