package admission

import (
	"maps"

	"github.com/gantry-sched/gantry/pkg/api"
)

// admittedSet holds the admitted workloads as a base map shared between clones (never
// written once built) plus this copy's own additions and removals, so Clone costs
// O(changes) rather than O(admitted). It compacts itself when the changes grow large.
type admittedSet struct {
	base    map[api.WorkloadID]*AdmittedWorkload
	added   map[api.WorkloadID]*AdmittedWorkload
	removed map[api.WorkloadID]bool // base entries removed in this copy
}

func newAdmittedSet() admittedSet {
	return admittedSet{base: map[api.WorkloadID]*AdmittedWorkload{}, added: map[api.WorkloadID]*AdmittedWorkload{}, removed: map[api.WorkloadID]bool{}}
}

func (a *admittedSet) get(id api.WorkloadID) (*AdmittedWorkload, bool) {
	if w, ok := a.added[id]; ok {
		return w, true
	}
	if a.removed[id] {
		return nil, false
	}
	w, ok := a.base[id]
	return w, ok
}

func (a *admittedSet) len() int { return len(a.base) - len(a.removed) + len(a.added) }

// add records w; the caller has checked it is not present.
func (a *admittedSet) add(w *AdmittedWorkload) {
	a.added[w.ID] = w
	a.compact()
}

// remove forgets id; the caller has checked it is present.
func (a *admittedSet) remove(id api.WorkloadID) {
	if _, ok := a.added[id]; ok {
		delete(a.added, id)
		return
	}
	a.removed[id] = true
	a.compact()
}

// each calls fn for every admitted workload, in no particular order.
func (a *admittedSet) each(fn func(*AdmittedWorkload)) {
	for id, w := range a.base {
		if !a.removed[id] {
			fn(w)
		}
	}
	for _, w := range a.added {
		fn(w)
	}
}

func (a *admittedSet) clone() admittedSet {
	return admittedSet{base: a.base, added: maps.Clone(a.added), removed: maps.Clone(a.removed)}
}

// compact folds the changes into a new base once they outgrow a 32nd of it (every cycle
// clones the changes, so they are kept short; folding costs the whole base); the
// old base may still be shared by clones, so it is replaced, never written.
func (a *admittedSet) compact() {
	if len(a.added)+len(a.removed) <= 64+len(a.base)/32 {
		return
	}
	base := make(map[api.WorkloadID]*AdmittedWorkload, a.len())
	a.each(func(w *AdmittedWorkload) { base[w.ID] = w })
	a.base, a.added, a.removed = base, map[api.WorkloadID]*AdmittedWorkload{}, map[api.WorkloadID]bool{}
}
