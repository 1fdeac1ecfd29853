package controller

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/manifest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// kueueEntry is one kueue.x-k8s.io queue object from the cluster: as the API server
// serves it (its status is written and its events recorded on it) and converted.
type kueueEntry struct {
	raw *unstructured.Unstructured
	obj client.Object // the gantry.dev/v1alpha1 type; nil when conversion failed
	err string        // why conversion failed
}

// kueueStore keeps Kueue's own queue objects beside the gantry.dev ones of queueStore,
// each converted once per change by the loader's reader of its apiVersion
// (manifest.KueueObjectFromCluster).
type kueueStore struct {
	items keyed[kueueEntry] // by kueueKey
	// problem is each object's problem as of the last conversion of queueStore: failed
	// conversion, a name a gantry.dev object holds too, or a reference that does not
	// resolve. reported is the last one recorded as an event.
	problem  map[string]string
	reported map[string]string
}

// kueueKey is "Kind/namespace/name" (or "Kind/name"): kinds share the store.
func kueueKey(kind, key string) string { return kind + "/" + key }

// update stores u, or forgets it when del is set, if u is a Kueue queue object (ok
// false for other objects). Like updateIn, it reports whether the conversion went
// stale: not after a change of status or other fields conversion does not read.
func (k *kueueStore) update(u *unstructured.Unstructured, del bool) (changed, ok bool) {
	gvk := u.GroupVersionKind()
	if gvk.Group != kueueGroup || !isKueueQueueKind(gvk.Kind) && !isKueueCheckKind(gvk.Kind) {
		return false, false
	}
	key := kueueKey(gvk.Kind, objKey(u))
	if del {
		delete(k.reported, key)
		return k.items.del(key), true
	}
	old, had := k.items.get(key)
	if had && old.raw.GetAPIVersion() == u.GetAPIVersion() && !specChanged(old.raw, u) {
		old.raw = u // the newest resourceVersion and status, for status writes
		k.items.put(key, old)
		return false, true
	}
	if isKueueCheckKind(gvk.Kind) {
		k.items.put(key, kueueEntry{raw: u}) // read by the loader with the queue objects
		return true, true
	}
	k.items.put(key, convertKueue(u))
	return true, true
}

// checkObjects are the served admission check objects (kueueCheckKinds) in key order,
// but those in left, for manifest.Typed.CheckObjects (shared: read-only).
func (k *kueueStore) checkObjects(left map[string]bool) []map[string]any {
	var out []map[string]any
	for _, key := range k.items.keys() {
		kind, _, _ := strings.Cut(key, "/")
		if isKueueCheckKind(kind) && !left[key] {
			out = append(out, k.items.items[key].raw.Object)
		}
	}
	return out
}

// convertKueue converts u with the reader the loader uses for its apiVersion.
func convertKueue(u *unstructured.Unstructured) kueueEntry {
	e := kueueEntry{raw: u}
	obj, err := manifest.KueueObjectFromCluster(kueueSource(u.GetAPIVersion()), u.Object)
	switch co, ok := obj.(client.Object); {
	case err != nil:
		e.err = err.Error()
	case !ok:
		e.err = fmt.Sprintf("%s: %s %s: not converted", kueueSource(u.GetAPIVersion()), u.GetKind(), objKey(u))
	default:
		e.obj = co
	}
	return e
}

// kueueSource is the Source.File of a Kueue object's errors, naming the version read:
// "cluster (kueue.x-k8s.io/v1beta2): ClusterQueue gpu: spec.cohort: ...".
func kueueSource(apiVersion string) string { return queueSource + " (" + apiVersion + ")" }

// usable returns the converted objects of kind in key order, leaving out those in left
// and those whose name a gantry.dev object of the same kind holds (taken): Gantry's
// own object is used and the Kueue one reported, never merged.
func usable[T client.Object](k *kueueStore, kind string, taken func(string) bool, left map[string]bool) []T {
	var out []T
	for _, key := range k.items.keys() {
		rest, ok := strings.CutPrefix(key, kind+"/")
		if !ok || taken(rest) || left[key] {
			continue
		}
		if t, ok := k.items.items[key].obj.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// startProblems records, before a conversion of queueStore, the problems Kueue
// objects have on their own (failed conversion) and against the gantry.dev objects
// (taken reports whether a gantry.dev object of the kind holds the name), and returns
// them as queueStore.problems lines.
func (k *kueueStore) startProblems(taken func(kind, key string) bool) []string {
	k.problem = map[string]string{}
	var lines []string
	for _, key := range k.items.keys() {
		e := k.items.items[key]
		kind, name, _ := strings.Cut(key, "/")
		switch {
		case e.err != "":
			k.problem[key] = e.err
		case taken(kind, name):
			k.problem[key] = fmt.Sprintf("%s: %s %s: a gantry.dev/v1alpha1 %s of the same name exists; it is used and this object is left out (rename or delete one of them)",
				kueueSource(e.raw.GetAPIVersion()), kind, name, kind)
		default:
			continue
		}
		lines = append(lines, k.problem[key])
	}
	return lines
}

// blame records err, from the conversion of all queue objects, as the problem of the
// Kueue object it names, if one is in use under that name.
func (k *kueueStore) blame(err *manifest.Error) {
	key := kueueKey(err.Kind, err.Name)
	if e, ok := k.items.get(key); ok && (e.obj != nil || isKueueCheckKind(err.Kind)) && k.problem[key] == "" {
		k.problem[key] = err.Error()
	}
}

// kueueEvent is a problem to record as a Warning event on the Kueue object.
type kueueEvent struct {
	obj *unstructured.Unstructured
	msg string
}

// unreported returns the problems not yet recorded as events, in key order, and
// counts them as recorded: an event is recorded once per problem, not every pass.
func (k *kueueStore) unreported() []kueueEvent {
	if k.reported == nil {
		k.reported = map[string]string{}
	}
	var out []kueueEvent
	for _, key := range k.items.keys() {
		p := k.problem[key]
		if p == "" || k.reported[key] == p {
			if p == "" {
				delete(k.reported, key)
			}
			continue
		}
		k.reported[key] = p
		out = append(out, kueueEvent{obj: k.items.items[key].raw, msg: p})
	}
	return out
}

// inUse returns the served objects of kind that were converted and have no problem,
// in key order (shared: read-only), for their status.
func (k *kueueStore) inUse(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, key := range k.items.keys() {
		if strings.HasPrefix(key, kind+"/") && k.items.items[key].obj != nil && k.problem[key] == "" {
			out = append(out, k.items.items[key].raw)
		}
	}
	return out
}

// hasLocalQueueIn reports whether a Kueue LocalQueue lives in namespace ns.
func (k *kueueStore) hasLocalQueueIn(ns string) bool {
	for _, key := range k.items.keys() {
		if strings.HasPrefix(key, "LocalQueue/"+ns+"/") {
			return true
		}
	}
	return false
}
