package engine

import (
	"hash/fnv"
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Ties between equally scored nodes are broken by a source seeded from the policy's
// seed and the workload, not drawn from one stream for the whole run: how many cycles
// a driver ran before (the simulator one per event, the controller one per pass) must
// not change where a gang lands. Same state, same seed, same workload: same nodes.

// TieBreak is the seeded source for one workload's placement. It is keyed by what both
// drivers know alike: the namespace and the owning job's kind and name (the simulator
// names a workload after its job; the controller's Workload objects have names of their
// own), else the workload's ID.
func TieBreak(seed int64, w *api.Workload) *rand.Rand {
	key := string(w.ID())
	if w.Owner.Name != "" {
		key = w.Namespace + "/" + w.Owner.Kind + "/" + w.Owner.Name
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return rand.New(&splitmix{state: uint64(seed) ^ h.Sum64()})
}

// splitmix is SplitMix64: eight bytes of state, where rand.NewSource allocates
// kilobytes, so a source per placement costs nothing.
type splitmix struct{ state uint64 }

func (s *splitmix) Uint64() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix) Int63() int64    { return int64(s.Uint64() >> 1) }
func (s *splitmix) Seed(seed int64) { s.state = uint64(seed) }

var _ rand.Source64 = (*splitmix)(nil)
