package cluster

import "math/bits"

// NodeSet is a set of node indices of one snapshot, one bit per node. Candidate search
// combines the node index's answers with And and walks the members in ascending order,
// so the nodes it yields come in the same order as a scan of 0..NumNodes()-1 would.
// The zero value is the empty set.
type NodeSet struct {
	words []uint64
}

// wordsFor is the number of 64-bit words a set of n nodes needs.
func wordsFor(n int) int { return (n + 63) / 64 }

// reset makes s an empty set over n nodes, reusing its storage.
func (s *NodeSet) reset(n int) {
	w := wordsFor(n)
	if cap(s.words) < w {
		s.words = make([]uint64, w)
		return
	}
	s.words = s.words[:w]
	clear(s.words)
}

// Has reports whether node i is in the set.
func (s *NodeSet) Has(i int) bool {
	w := i >> 6
	return w < len(s.words) && s.words[w]&(1<<(uint(i)&63)) != 0
}

// fill makes s the set of all n nodes, reusing its storage.
func (s *NodeSet) fill(n int) {
	s.reset(n)
	for k := range s.words {
		s.words[k] = ^uint64(0)
	}
	if r := n & 63; r != 0 {
		s.words[len(s.words)-1] = 1<<r - 1
	}
}

func (s *NodeSet) add(i int)    { s.words[i>>6] |= 1 << (uint(i) & 63) }
func (s *NodeSet) remove(i int) { s.words[i>>6] &^= 1 << (uint(i) & 63) }

// Next returns the smallest member at or after i, or -1 when there is none: the walk
// `for i := s.Next(0); i >= 0; i = s.Next(i + 1)` visits the members in ascending order.
func (s *NodeSet) Next(i int) int {
	if i < 0 {
		i = 0
	}
	w := i >> 6
	if w >= len(s.words) {
		return -1
	}
	if rest := s.words[w] >> (uint(i) & 63); rest != 0 {
		return i + bits.TrailingZeros64(rest)
	}
	for w++; w < len(s.words); w++ {
		if s.words[w] != 0 {
			return w<<6 + bits.TrailingZeros64(s.words[w])
		}
	}
	return -1
}

// Len is the number of members.
func (s *NodeSet) Len() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// And keeps only the members that o has too.
func (s *NodeSet) And(o *NodeSet) {
	for k := range s.words {
		if k < len(o.words) {
			s.words[k] &= o.words[k]
		} else {
			s.words[k] = 0
		}
	}
}

// or adds o's members.
func (s *NodeSet) or(o []uint64) {
	for k, w := range o {
		s.words[k] |= w
	}
}
