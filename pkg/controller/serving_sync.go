package controller

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// syncServing keeps the Workloads of every queued serving object in step with it,
// level-triggered (see serving.go for what each kind becomes):
//   - a Workload it should have and lacks is created;
//   - one whose pod sets changed size (a StatefulSet or LeaderWorkerSet scaled) is
//     re-created, as Kueue re-creates it: its pods are evicted so the new gang is
//     placed whole, and their controller recreates them Pending;
//   - one it should no longer have (a Deployment's pod gone, a group scaled away) is
//     finished, which frees its quota at once, and deleted.
//
// Deleting the object deletes its Workloads through their owner references (the
// garbage collector), which frees their quota as a deleted Job's does.
func (ctl *Controller) syncServing(ctx context.Context, now time.Time) {
	objs, listed := ctl.servingObjects(ctx)
	if len(objs) == 0 && !ctl.servingWorkloadsExist(ctx, listed) {
		return // nothing serving: no snapshot taken
	}
	w := ctl.cache.snapshot()
	byOwner := servingWorkloadsByOwner(w.workloads)
	podsByNS := map[string][]*corev1.Pod{}
	for _, p := range w.pods {
		podsByNS[p.Namespace] = append(podsByNS[p.Namespace], p)
	}
	// Objects are independent (each writes only its own Workloads).
	each(len(objs), syncWorkers, func(i int) {
		o := objs[i]
		ns := o.u.GetNamespace()
		if err := ctl.syncServingObject(ctx, w, o, podsByNS[ns], byOwner[ns+"/"+o.ownerKey()], now); err != nil {
			ctl.log.Error(err, "sync", "kind", o.kind.GVK.Kind, "object", ns+"/"+o.u.GetName())
		}
	})
	// Workloads of objects deleted (or no longer queued) go now, not when the garbage
	// collector gets to them, so their quota is free this pass.
	for _, wl := range servingOrphans(byOwner, objs, listed) {
		if err := ctl.dropServing(ctx, wl, now); err != nil {
			ctl.log.Error(err, "drop workload of a deleted serving object", "workload", wlKey(wl))
		}
	}
}

// servingOrphans are the serving Workloads whose object, of a kind listed this pass, is
// no longer among the queued objects, in key order.
func servingOrphans(byOwner map[string][]*v1alpha1.Workload, objs []servingObject, listed map[string]bool) []*v1alpha1.Workload {
	live := make(map[string]bool, len(objs))
	for _, o := range objs {
		live[o.u.GetNamespace()+"/"+o.ownerKey()] = true
	}
	var out []*v1alpha1.Workload
	for key, wls := range byOwner {
		_, owner, _ := strings.Cut(key, "/") // "namespace/<Kind>/<name>"
		kind, _, _ := strings.Cut(owner, "/")
		if live[key] || !listed[kind] {
			continue
		}
		out = append(out, wls...)
	}
	sort.Slice(out, func(i, j int) bool { return wlKey(out[i]) < wlKey(out[j]) })
	return out
}

// servingWorkloadsExist reports whether the informer cache holds a Workload of a serving
// kind listed this pass (one whose object may have gone).
func (ctl *Controller) servingWorkloadsExist(ctx context.Context, listed map[string]bool) bool {
	for kind := range listed {
		var wls v1alpha1.WorkloadList
		if err := ctl.watch.informers.List(ctx, &wls, client.MatchingLabels{LabelJobKind: kind}); err != nil || len(wls.Items) > 0 {
			return true // when unsure, look
		}
	}
	return false
}

// servingObjects lists the queued, live objects of every watched serving kind from the
// informer cache, and which kinds were listed.
func (ctl *Controller) servingObjects(ctx context.Context) ([]servingObject, map[string]bool) {
	var out []servingObject
	listed := map[string]bool{}
	for _, k := range servingKinds() {
		if !ctl.watch.watching(k.GVK.String()) {
			continue
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := ctl.watch.informers.List(ctx, list); err != nil {
			ctl.log.Error(err, "list", "kind", k.GVK.Kind)
			continue
		}
		listed[k.GVK.Kind] = true
		for i := range list.Items {
			o := servingObject{kind: k, u: &list.Items[i]}
			if o.u.GetDeletionTimestamp() == nil && servingQueue(o) != "" {
				out = append(out, o)
			}
		}
	}
	return out, listed
}

// servingWorkloadsByOwner indexes the pass's serving Workloads by
// "namespace/<AnnotationServingOwner>".
func servingWorkloadsByOwner(wls []v1alpha1.Workload) map[string][]*v1alpha1.Workload {
	out := map[string][]*v1alpha1.Workload{}
	for i := range wls {
		wl := &wls[i]
		if o := wl.Annotations[AnnotationServingOwner]; o != "" && wl.DeletionTimestamp == nil {
			out[wl.Namespace+"/"+o] = append(out[wl.Namespace+"/"+o], wl)
		}
	}
	return out
}

// syncServingObject brings one object's Workloads (have) to what it should have now.
func (ctl *Controller) syncServingObject(ctx context.Context, w *world, o servingObject, pods []*corev1.Pod, have []*v1alpha1.Workload, now time.Time) error {
	if field := templatesNotGantry(o, ctl.podWebhook); field != "" {
		ctl.events.Eventf(o.u, "Warning", ReasonInvalid, "%s %s/%s: %s: not %q, so its pods would not wait for admission; Gantry queues none of them",
			o.kind.GVK.Kind, o.u.GetNamespace(), o.u.GetName(), field, SchedulerName)
		return nil
	}
	want, err := o.kind.desired(o, pods)
	if err != nil {
		ctl.events.Eventf(o.u, "Warning", ReasonInvalid, "%s %s/%s: %v", o.kind.GVK.Kind, o.u.GetNamespace(), o.u.GetName(), err)
		return nil
	}
	byName := make(map[string]*v1alpha1.Workload, len(have))
	for _, wl := range have {
		byName[wl.Name] = wl
	}
	var errs []error
	for _, sw := range want {
		cur := byName[sw.wl.Name]
		delete(byName, sw.wl.Name)
		switch {
		case cur == nil && sw.create:
			if err := ctl.c.Create(ctx, sw.wl); err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("create workload %s: %w", sw.wl.Name, err))
			}
		case cur != nil && !samePodSetSizes(cur, sw.wl):
			errs = append(errs, ctl.recreateServing(ctx, w, cur))
		}
	}
	extra := make([]string, 0, len(byName))
	for name := range byName {
		extra = append(extra, name)
	}
	sort.Strings(extra)
	for _, name := range extra {
		errs = append(errs, ctl.dropServing(ctx, byName[name], now))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// samePodSetSizes reports whether two Workloads have the same pod sets of the same
// sizes: what scaling a serving object changes.
func samePodSetSizes(a, b *v1alpha1.Workload) bool {
	if len(a.Spec.PodSets) != len(b.Spec.PodSets) {
		return false
	}
	for i := range a.Spec.PodSets {
		if a.Spec.PodSets[i].Name != b.Spec.PodSets[i].Name || a.Spec.PodSets[i].Count != b.Spec.PodSets[i].Count {
			return false
		}
	}
	return true
}

// recreateServing deletes a gang whose size changed, after evicting its pods when it
// was admitted (binds in flight land first): the next pass creates it at its new size,
// and the pods its controller recreates wait for that admission.
func (ctl *Controller) recreateServing(ctx context.Context, w *world, wl *v1alpha1.Workload) error {
	if wl.Status.Admission != nil {
		if !ctl.binds.settle(ctx, wlKey(wl)) {
			return ctx.Err()
		}
		if err := ctl.evictPods(ctx, wl, w.podsOf(wl), false); err != nil {
			return err
		}
	}
	ctl.events.Eventf(wl, "Normal", ReasonServingResized, "its owner was scaled: re-created at the new size")
	return ctl.deleteWorkload(ctx, wl)
}

// dropServing finishes a Workload its object no longer has (its quota is free from
// this pass on) and deletes it.
func (ctl *Controller) dropServing(ctx context.Context, wl *v1alpha1.Workload, now time.Time) error {
	if !meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished) {
		err := ctl.writeWorkloadStatus(ctx, wl, finishedStatus(wl.Status, false, now))
		if apierrors.IsNotFound(err) {
			return nil // the garbage collector was first (it deletes a pod's Workload with it)
		}
		if err != nil {
			return err
		}
	}
	return ctl.deleteWorkload(ctx, wl)
}

func (ctl *Controller) deleteWorkload(ctx context.Context, wl *v1alpha1.Workload) error {
	if err := ctl.c.Delete(ctx, wl); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete workload %s: %w", wlKey(wl), err)
	}
	// Forgotten now, not when the watch reports it: the next pass must not see the old
	// gang again and evict the pods recreated for the new one.
	ctl.cache.remove(wl)
	return nil
}

// ReasonServingResized: a serving gang was re-created because its owner was scaled.
const ReasonServingResized = "Resized"
