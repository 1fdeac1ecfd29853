package sim

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// The live list holds the IDs of submitted, unfinished workloads, sorted. Cycles, wakes
// and samples walk it instead of every workload: on a long trace most workloads are
// either not submitted yet or finished, and walking them all made each cycle cost
// O(all jobs) (quadratic replays).

// addLive inserts a submitted workload, keeping the list sorted (deterministic order).
func (s *Simulator) addLive(id api.WorkloadID) {
	i := sort.Search(len(s.live), func(i int) bool { return s.live[i] >= id })
	if i < len(s.live) && s.live[i] == id {
		return
	}
	s.live = append(s.live, "")
	copy(s.live[i+1:], s.live[i:])
	s.live[i] = id
}

// dropLive removes a finished workload.
func (s *Simulator) dropLive(id api.WorkloadID) {
	i := sort.Search(len(s.live), func(i int) bool { return s.live[i] >= id })
	if i < len(s.live) && s.live[i] == id {
		s.live = append(s.live[:i], s.live[i+1:]...)
	}
}
