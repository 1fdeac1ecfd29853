package admission

import (
	"maps"

	"github.com/gantry-sched/gantry/pkg/api"
)

// admittedShards is how many parts the shared base of an admittedSet is split into.
// Folding a copy's changes into a new base copies only the parts they touch: with
// thousands admitted, a burst of completions and admissions folded the whole base
// several times a cycle, an eighth of the cycle.
const admittedShards = 4096

// admittedBase is the shared, never-written part of an admittedSet, by shard.
type admittedBase [admittedShards]map[api.WorkloadID]*AdmittedWorkload

// admittedSet holds the admitted workloads as a base shared between clones (never
// written once built) plus this copy's own additions and removals, so Clone costs
// O(changes) rather than O(admitted). It folds the changes into a new base, shard by
// shard, when they grow past a few hundred.
type admittedSet struct {
	base    *admittedBase
	n       int // workloads in base
	added   map[api.WorkloadID]*AdmittedWorkload
	removed map[api.WorkloadID]bool // base entries removed in this copy
	foldAt  int                     // changes kept before folding (compactAt; smaller in tests)
}

func newAdmittedSet() admittedSet { return newAdmittedSetFoldingAt(compactAt) }

func newAdmittedSetFoldingAt(n int) admittedSet {
	return admittedSet{base: &admittedBase{}, added: map[api.WorkloadID]*AdmittedWorkload{}, removed: map[api.WorkloadID]bool{}, foldAt: n}
}

// admittedShardOf spreads IDs over the shards (FNV-1a).
func admittedShardOf(id api.WorkloadID) int {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return int(h % admittedShards)
}

func (a *admittedSet) get(id api.WorkloadID) (*AdmittedWorkload, bool) {
	if w, ok := a.added[id]; ok {
		return w, true
	}
	if a.removed[id] {
		return nil, false
	}
	w, ok := a.base[admittedShardOf(id)][id]
	return w, ok
}

func (a *admittedSet) len() int { return a.n - len(a.removed) + len(a.added) }

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
	for _, m := range a.base {
		for id, w := range m {
			if !a.removed[id] {
				fn(w)
			}
		}
	}
	for _, w := range a.added {
		fn(w)
	}
}

func (a *admittedSet) clone() admittedSet {
	return admittedSet{base: a.base, n: a.n, added: maps.Clone(a.added), removed: maps.Clone(a.removed), foldAt: a.foldAt}
}

// compactAt is how many changes a copy keeps before folding them into a new base:
// every cycle clones the changes, so they are kept short, and a fold copies only the
// shards they touch.
const compactAt = 256

// compact folds the changes into a new base once they reach foldAt; the old base may
// still be shared by clones, so each touched shard is copied, never written.
func (a *admittedSet) compact() {
	if len(a.added)+len(a.removed) < a.foldAt {
		return
	}
	base := *a.base // the shard maps are shared until written
	var copied [admittedShards / 64]uint64
	shard := func(id api.WorkloadID) map[api.WorkloadID]*AdmittedWorkload {
		i := admittedShardOf(id)
		if copied[i/64]&(1<<(i%64)) == 0 {
			copied[i/64] |= 1 << (i % 64)
			base[i] = maps.Clone(base[i])
			if base[i] == nil {
				base[i] = map[api.WorkloadID]*AdmittedWorkload{}
			}
		}
		return base[i]
	}
	for id := range a.removed {
		delete(shard(id), id)
	}
	for id, w := range a.added {
		shard(id)[id] = w
	}
	a.base, a.n = &base, a.len()
	a.added, a.removed = map[api.WorkloadID]*AdmittedWorkload{}, map[api.WorkloadID]bool{}
}
