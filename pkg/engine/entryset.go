package engine

// entrySet is a set of scheduler entries. Each entry remembers its place in the sets
// it is in (one per slot: phase, park kind, ClusterQueue, cohort tree, quota class), so
// joining and leaving cost an append and a swap, no hashing: every park, wake, start
// and finish moves a workload between several of these sets. Iteration order is
// deterministic (the order of joins, as swaps left it).
type entrySet struct {
	list []*entry
	// before, when set, keeps list a binary heap in that order: list[0] is the least
	// member (a class's members in the order the cycle visits them).
	before func(a, b *entry) bool
}

// slot names the index an entrySet serves, so one entry can be in one set per slot.
type slot uint8

const (
	slotPhase     slot = iota // active, running or leaving
	slotKind                  // parked by kind
	slotCQ                    // parked by ClusterQueue
	slotRoot                  // parked by cohort tree
	slotClass                 // parked for quota, by cohort tree and class (or alone)
	slotPreempt               // parked and may preempt, by cohort tree
	slotProtected             // running with a minimum runtime
	slotSeek                  // slot seekers, by class
	numSlots
)

// entrySlots is what an entry keeps for its sets.
type entrySlots struct {
	in  [numSlots]*entrySet
	pos [numSlots]int32
}

// join adds e to s under slot k, leaving the set it was in under k first.
func (s *entrySet) join(e *entry, k slot) {
	if e.slots.in[k] == s {
		return
	}
	leave(e, k)
	e.slots.in[k], e.slots.pos[k] = s, int32(len(s.list))
	s.list = append(s.list, e)
	if s.before != nil {
		s.up(len(s.list)-1, k)
	}
}

// leave removes e from its set under slot k, if any.
func leave(e *entry, k slot) {
	s := e.slots.in[k]
	if s == nil {
		return
	}
	i, last := e.slots.pos[k], len(s.list)-1
	moved := s.list[last]
	s.list[i], moved.slots.pos[k] = moved, i
	s.list[last] = nil
	s.list = s.list[:last]
	e.slots.in[k] = nil
	if s.before != nil && int(i) < last {
		s.down(int(i), k)
		s.up(int(i), k)
	}
}

// first is the least member of an ordered set (nil when empty).
func (s *entrySet) first() *entry {
	if s.Len() == 0 {
		return nil
	}
	return s.list[0]
}

// firstNotSeeking is the least member of an ordered set that is not a quota seeker
// waiting for its turn (quota_seekers.go). Only a class's first member is ever handed
// as one, so that is the least member or, when it is skipped, the lesser of its two
// children in the heap.
func (s *entrySet) firstNotSeeking() *entry {
	if s.Len() == 0 || !s.list[0].seeking {
		return s.first()
	}
	var best *entry
	for _, c := range s.list[1:min(3, len(s.list))] {
		if best == nil || s.before(c, best) {
			best = c
		}
	}
	return best
}

// up and down restore the heap order of an ordered set around position i.
func (s *entrySet) up(i int, k slot) {
	for i > 0 {
		p := (i - 1) / 2
		if !s.before(s.list[i], s.list[p]) {
			return
		}
		s.swap(i, p, k)
		i = p
	}
}

func (s *entrySet) down(i int, k slot) {
	for {
		l, least := 2*i+1, i
		if l < len(s.list) && s.before(s.list[l], s.list[least]) {
			least = l
		}
		if r := l + 1; r < len(s.list) && s.before(s.list[r], s.list[least]) {
			least = r
		}
		if least == i {
			return
		}
		s.swap(i, least, k)
		i = least
	}
}

func (s *entrySet) swap(i, j int, k slot) {
	s.list[i], s.list[j] = s.list[j], s.list[i]
	s.list[i].slots.pos[k], s.list[j].slots.pos[k] = int32(i), int32(j)
}

// Len is the number of entries in s (a nil set is empty).
func (s *entrySet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.list)
}

// entries are the members, to range over; not to be kept across changes of s.
func (s *entrySet) entries() []*entry {
	if s == nil {
		return nil
	}
	return s.list
}

// setOf returns m's set for key, making it on first use.
func setOf[K comparable](m map[K]*entrySet, key K) *entrySet {
	s := m[key]
	if s == nil {
		s = &entrySet{}
		m[key] = s
	}
	return s
}
