package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Kueue's own queue objects (kueue.x-k8s.io) are read where Kueue's CRDs are
// installed: a cluster that ran Kueue keeps its ResourceFlavors, ClusterQueues,
// LocalQueues, Cohorts, WorkloadPriorityClasses and Topologies, and Gantry, replacing
// Kueue's controller, schedules by them. They are watched as unstructured objects
// (no dependency on Kueue's Go module), under the version the API server prefers, and
// converted by the loader's reader of that version (kueuecrd_store.go). Kueue's
// Workload CRD is not read: Gantry keeps its own gantry.dev Workloads.

// kueueGroup is the API group of Kueue's objects.
const kueueGroup = "kueue.x-k8s.io"

// kueueQueueKinds are the Kueue kinds read as queue objects.
func kueueQueueKinds() []string {
	return []string{"ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Topology"}
}

func isKueueQueueKind(kind string) bool { return slices.Contains(kueueQueueKinds(), kind) }

// kueueCheckKinds are the Kueue kinds of admission checks (provreq*.go). They have no
// gantry.dev form: they are kept as served and read by the loader as documents
// (manifest.Typed.CheckObjects).
func kueueCheckKinds() []string { return []string{"AdmissionCheck", "ProvisioningRequestConfig"} }

func isKueueCheckKind(kind string) bool { return slices.Contains(kueueCheckKinds(), kind) }

// kueueKinds are every Kueue kind read: queue kinds, then check kinds.
func kueueKinds() []string { return append(kueueQueueKinds(), kueueCheckKinds()...) }

// kueueVersions are the versions read, preferred first: v1beta2 is Kueue's storage
// version since v0.16; a cluster with an older Kueue serves v1beta1 only.
func kueueVersions() []string { return []string{"v1beta2", "v1beta1"} }

// firstServed returns kind under the first of kueueVersions that try accepts; try
// fails for a version the API server does not serve (its discovery, through the REST
// mapper, does not list it). ok is false when no version is served: the CRD is not
// installed, which is not an error. errs says what each version answered.
func firstServed(kind string, try func(schema.GroupVersionKind) error) (gvk schema.GroupVersionKind, ok bool, errs []string) {
	for _, v := range kueueVersions() {
		gvk = schema.GroupVersionKind{Group: kueueGroup, Version: v, Kind: kind}
		err := try(gvk)
		if err == nil {
			return gvk, true, nil
		}
		errs = append(errs, v+": "+err.Error())
	}
	return schema.GroupVersionKind{}, false, errs
}

// kueueWatchID is the watcher's id of a Kueue kind: group and kind without the
// version, so a kind is watched under one version only.
func kueueWatchID(kind string) string { return kueueGroup + "/" + kind }

// ensureKueue watches each Kueue queue kind whose CRD is installed, under the
// preferred served version, with the handler every watched type has; it returns the
// kinds not watched (not installed), as ensure does. Called from ensure, so a CRD
// installed later is watched from the next resync on.
func (w *watcher) ensureKueue(ctx context.Context) []string {
	if w.informers == nil {
		return nil
	}
	var missing []string
	for _, kind := range kueueKinds() {
		id := kueueWatchID(kind)
		if w.done[id] {
			continue
		}
		_, ok, errs := firstServed(kind, func(gvk schema.GroupVersionKind) error { return w.watchUnstructured(ctx, gvk) })
		if !ok {
			missing = append(missing, fmt.Sprintf("%s (%s)", id, strings.Join(errs, "; ")))
			continue
		}
		w.done[id] = true
	}
	return missing
}

// watchUnstructured hangs the watcher's handler on the informer of gvk.
func (w *watcher) watchUnstructured(ctx context.Context, gvk schema.GroupVersionKind) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	inf, err := w.informers.GetInformer(ctx, u, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	reg, err := inf.AddEventHandler(w.handler())
	if err != nil {
		return err
	}
	w.regs = append(w.regs, reg)
	return nil
}

// listKueue lists the Kueue queue objects for ReadView, each kind under the version
// the controller watches it (firstServed); kinds whose CRD is not installed are left
// out, as the controller leaves them unwatched.
func listKueue(ctx context.Context, c client.Reader) ([]client.Object, error) {
	var out []client.Object
	for _, kind := range kueueKinds() {
		var fatal error
		_, _, _ = firstServed(kind, func(gvk schema.GroupVersionKind) error {
			l := &unstructured.UnstructuredList{}
			l.SetGroupVersionKind(gvk.GroupVersion().WithKind(kind + "List"))
			err := c.List(ctx, l)
			if err != nil {
				if !meta.IsNoMatchError(err) {
					fatal = fmt.Errorf("view: list %s: %w", gvk, err)
				}
				return err
			}
			for i := range l.Items {
				u := &l.Items[i]
				if u.GetKind() == "" { // a list's items may come without their type
					u.SetGroupVersionKind(gvk)
				}
				out = append(out, u)
			}
			return nil
		})
		if fatal != nil {
			return nil, fatal
		}
	}
	return out, nil
}
