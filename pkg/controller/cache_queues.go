package controller

import (
	"errors"
	"maps"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// queueSource is the Source.File of every queue object read from the API server; errors
// read "cluster: ClusterQueue gpu: spec.queueingStrategy: ...".
const queueSource = "cluster"

// queueStore keeps the typed queue objects as the informers deliver them and their
// conversion into the engine's model, redone only after one of them changed.
type queueStore struct {
	flavors    keyed[*v1alpha1.ResourceFlavor]
	cohorts    keyed[*v1alpha1.Cohort]
	cqs        keyed[*v1alpha1.ClusterQueue]
	lqs        keyed[*v1alpha1.LocalQueue]
	wpcs       keyed[*v1alpha1.WorkloadPriorityClass]
	topologies keyed[*v1alpha1.Topology]
	namespaces keyed[*corev1.Namespace]
	// kueue holds kueue.x-k8s.io queue objects, where Kueue's CRDs are installed
	// (kueuecrd.go), converted to the same types and loaded with these.
	kueue kueueStore

	dirty       bool
	objs        *api.Objects // the last conversion, shared read-only with snapshots
	problems    []string     // objects left out of objs, each with its object and field
	conversions int          // how many times objs was built (tests count them)
}

// update stores o, or forgets it when del is set, if o is a queue object (ok false
// for other kinds). It reports whether a pass could decide differently now: not after
// a change conversion does not read (a status write, a Namespace's phase), nor after a
// change of a Namespace no LocalQueue lives in (no workload there can be admitted).
func (q *queueStore) update(o client.Object, del bool) (changed, ok bool) {
	switch o := o.(type) {
	case *v1alpha1.ResourceFlavor:
		return updateIn(q, &q.flavors, o, del), true
	case *v1alpha1.Cohort:
		return updateIn(q, &q.cohorts, o, del), true
	case *v1alpha1.ClusterQueue:
		return updateIn(q, &q.cqs, o, del), true
	case *v1alpha1.LocalQueue:
		return updateIn(q, &q.lqs, o, del), true
	case *v1alpha1.WorkloadPriorityClass:
		return updateIn(q, &q.wpcs, o, del), true
	case *v1alpha1.Topology:
		return updateIn(q, &q.topologies, o, del), true
	case *corev1.Namespace:
		return updateIn(q, &q.namespaces, o, del) && q.hasLocalQueueIn(o.Name), true
	case *unstructured.Unstructured:
		changed, ok := q.kueue.update(o, del)
		q.dirty = q.dirty || changed
		return changed, ok
	}
	return false, false
}

// updateIn stores o in k, or forgets it, and marks the conversion stale when o came,
// went, or changed its spec, labels or annotations: conversion reads nothing else, so
// a status write (the controller's own, after most passes) does not force one. It
// reports whether the conversion went stale.
func updateIn[T client.Object](q *queueStore, k *keyed[T], o T, del bool) bool {
	key := objKey(o)
	old, had := k.get(key)
	switch {
	case del && !had:
		return false
	case del:
		k.del(key)
	default:
		k.put(key, o)
		if had && !specChanged(old, o) {
			return false
		}
	}
	q.dirty = true
	return true
}

// hasLocalQueueIn reports whether a LocalQueue lives in namespace ns.
func (q *queueStore) hasLocalQueueIn(ns string) bool {
	keys := q.lqs.keys()
	i := sort.SearchStrings(keys, ns+"/")
	return i < len(keys) && strings.HasPrefix(keys[i], ns+"/") || q.kueue.hasLocalQueueIn(ns)
}

func specChanged(old, cur client.Object) bool {
	return old.GetGeneration() != cur.GetGeneration() || !maps.Equal(old.GetLabels(), cur.GetLabels()) ||
		!maps.Equal(old.GetAnnotations(), cur.GetAnnotations())
}

// current returns the converted objects, converting first when something changed.
func (q *queueStore) current() (*api.Objects, []string) {
	if q.dirty || q.objs == nil {
		q.convert()
		q.dirty = false
	}
	return q.objs, q.problems
}

// convert runs the typed objects through manifest.LoadTyped, the loader `gantry
// simulate` uses, so defaults and checks are the same. An object with a problem is left
// out and the rest converted again without it, until what remains is clean: one bad
// ClusterQueue stops its own workloads (and its LocalQueues, whose reference then
// fails), not the whole cluster. Kueue objects that failed their own conversion, or
// whose name a gantry.dev object of the kind holds, are left out from the start.
func (q *queueStore) convert() {
	q.conversions++
	q.problems = q.kueue.startProblems(q.hasGantry)
	left := map[string]bool{} // "Kind/key" of objects left out
	for {
		objs, err := manifest.LoadTyped(queueSource, q.typed(left))
		var list manifest.ErrorList
		if err == nil || !errors.As(err, &list) {
			if err != nil {
				q.problems = append(q.problems, err.Error())
			}
			q.objs = objs
			return
		}
		more := false
		for _, e := range list {
			q.problems = append(q.problems, e.Error())
			q.kueue.blame(e)
			if id := e.Kind + "/" + e.Name; !left[id] {
				left[id], more = true, true
			}
		}
		if !more { // no object to blame: keep what loaded
			q.objs = objs
			return
		}
	}
}

// typed gathers the stored objects in key order, the gantry.dev ones and then the
// Kueue ones of each kind, leaving out those in left.
func (q *queueStore) typed(left map[string]bool) manifest.Typed {
	return manifest.Typed{
		Flavors:                 withKueue(q, &q.flavors, "ResourceFlavor", left),
		Cohorts:                 withKueue(q, &q.cohorts, "Cohort", left),
		ClusterQueues:           withKueue(q, &q.cqs, "ClusterQueue", left),
		LocalQueues:             withKueue(q, &q.lqs, "LocalQueue", left),
		WorkloadPriorityClasses: withKueue(q, &q.wpcs, "WorkloadPriorityClass", left),
		Topologies:              withKueue(q, &q.topologies, "Topology", left),
		Namespaces:              keep(&q.namespaces, "Namespace", left),
		CheckObjects:            q.kueue.checkObjects(left),
	}
}

// withKueue is keep for a queue kind, followed by its usable Kueue objects.
func withKueue[T client.Object](q *queueStore, k *keyed[T], kind string, left map[string]bool) []T {
	taken := func(key string) bool { _, ok := k.get(key); return ok }
	return append(keep(k, kind, left), usable[T](&q.kueue, kind, taken, left)...)
}

// hasGantry reports whether a gantry.dev object of kind is stored under key.
func (q *queueStore) hasGantry(kind, key string) bool {
	var ok bool
	switch kind {
	case "ResourceFlavor":
		_, ok = q.flavors.get(key)
	case "Cohort":
		_, ok = q.cohorts.get(key)
	case "ClusterQueue":
		_, ok = q.cqs.get(key)
	case "LocalQueue":
		_, ok = q.lqs.get(key)
	case "WorkloadPriorityClass":
		_, ok = q.wpcs.get(key)
	case "Topology":
		_, ok = q.topologies.get(key)
	}
	return ok
}

func keep[T any](k *keyed[T], kind string, left map[string]bool) []T {
	out := make([]T, 0, k.len())
	for _, key := range k.keys() {
		if !left[kind+"/"+key] {
			out = append(out, k.items[key])
		}
	}
	return out
}
