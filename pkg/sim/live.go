package sim

import (
	"iter"
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// The live list holds the IDs of submitted, unfinished workloads, sorted. Cycles, wakes
// and samples walk it instead of every workload: on a long trace most workloads are
// either not submitted yet or finished, and walking them all made each cycle cost
// O(all jobs) (quadratic replays). A finished workload is only marked gone, and the
// list is compacted once half of it is: removing in place moved the tail of a list of
// 100,000 IDs at every finish.
type liveList struct {
	ids  []api.WorkloadID
	gone []bool // per ids entry: finished, awaiting compaction
	dead int
	// added are IDs submitted since the list was last merged, unsorted: a trace submits
	// thousands at one instant, and inserting each in place moved half the list (with
	// the collector's write barrier on every ID moved) for each.
	added []api.WorkloadID
}

// add records a submitted workload; it joins the sorted list at the next read.
func (l *liveList) add(id api.WorkloadID) { l.added = append(l.added, id) }

// merge sorts the IDs added since the last read into the list (an ID still there,
// finished or not, is live again).
func (l *liveList) merge() {
	if len(l.added) == 0 {
		return
	}
	slices.Sort(l.added)
	add := slices.Compact(l.added)
	ids := make([]api.WorkloadID, 0, len(l.ids)+len(add))
	gone := make([]bool, 0, cap(ids))
	i, j := 0, 0
	for i < len(l.ids) || j < len(add) {
		switch {
		case j == len(add) || (i < len(l.ids) && l.ids[i] < add[j]):
			ids, gone = append(ids, l.ids[i]), append(gone, l.gone[i])
			i++
		case i < len(l.ids) && l.ids[i] == add[j]:
			if l.gone[i] {
				l.dead--
			}
			ids, gone = append(ids, l.ids[i]), append(gone, false)
			i, j = i+1, j+1
		default:
			ids, gone = append(ids, add[j]), append(gone, false)
			j++
		}
	}
	clear(l.added)
	l.ids, l.gone, l.added = ids, gone, l.added[:0]
}

// drop removes a finished workload.
func (l *liveList) drop(id api.WorkloadID) {
	l.merge()
	i := sort.Search(len(l.ids), func(i int) bool { return l.ids[i] >= id })
	if i == len(l.ids) || l.ids[i] != id || l.gone[i] {
		return
	}
	l.gone[i] = true
	l.dead++
	if l.dead > 64 && 2*l.dead > len(l.ids) {
		l.compact()
	}
}

func (l *liveList) compact() {
	k := 0
	for i, id := range l.ids {
		if !l.gone[i] {
			l.ids[k], l.gone[k] = id, false
			k++
		}
	}
	clear(l.ids[k:]) // let the dropped IDs go
	l.ids, l.gone, l.dead = l.ids[:k], l.gone[:k], 0
}

// all yields the live IDs in order.
func (l *liveList) all() iter.Seq[api.WorkloadID] {
	l.merge()
	return func(yield func(api.WorkloadID) bool) {
		for i, id := range l.ids {
			if !l.gone[i] && !yield(id) {
				return
			}
		}
	}
}

// addLive and dropLive keep the simulator's live list.
func (s *Simulator) addLive(id api.WorkloadID)  { s.live.add(id) }
func (s *Simulator) dropLive(id api.WorkloadID) { s.live.drop(id) }
