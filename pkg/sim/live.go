package sim

import (
	"iter"
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
}

// add inserts a submitted workload, keeping the list sorted (deterministic order).
func (l *liveList) add(id api.WorkloadID) {
	i := sort.Search(len(l.ids), func(i int) bool { return l.ids[i] >= id })
	if i < len(l.ids) && l.ids[i] == id {
		if l.gone[i] {
			l.gone[i] = false
			l.dead--
		}
		return
	}
	l.ids = append(l.ids, "")
	copy(l.ids[i+1:], l.ids[i:])
	l.ids[i] = id
	l.gone = append(l.gone, false)
	copy(l.gone[i+1:], l.gone[i:])
	l.gone[i] = false
}

// drop removes a finished workload.
func (l *liveList) drop(id api.WorkloadID) {
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
