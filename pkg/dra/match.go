package dra

import resourcev1 "k8s.io/api/resource/v1"

// The matcher chooses which candidate serves which request. Candidates come in the
// order of preference (Fit's own order), and the choice keeps that preference: for
// each choice of subrequests (in order) and of constraint values (in the order they
// first appear), it goes through the candidates and keeps each one that can still be
// given a request slot, moving earlier picks between requests when that makes room
// (an augmenting path, so the greedy choice is also a maximum one). The first choice
// that fills every slot wins.

// A request with allocationMode All is sized per choice of subrequests: it needs every
// candidate its selectors match, and none of the held devices may match (sizeParts).

// solution is a met set of claims: the alternative chosen per part and, per
// candidate, the part it serves (-1: not taken).
type solution struct {
	alt    []int
	assign []int
}

// matcher holds one search over evaluated candidates.
type matcher struct {
	pc *PodClaims
	ev []*evaluated
	// held are the node's held devices of the kind (for All requests); want is the
	// devices the current choice takes, need each part's share of them.
	held []*evaluated
	want int
	need []int64
	// alt is the alternative tried per part; value the constraint value per
	// constraint (present false: the constraint covers no part now).
	alt   []int
	value []attrValue
	// assign and load are the slots of the current try.
	assign []int
	load   []int64
	seen   []bool
}

// maxValueCombos bounds the constraint value combinations tried per subrequest choice.
const maxValueCombos = 4096

func (pc *PodClaims) newMatcher(ev, held []*evaluated) *matcher {
	return &matcher{pc: pc, ev: ev, held: held, alt: make([]int, len(pc.parts)), need: make([]int64, len(pc.parts)), value: make([]attrValue, len(pc.constraints)),
		assign: make([]int, len(ev)), load: make([]int64, len(pc.parts)), seen: make([]bool, len(pc.parts))}
}

// solve finds the first solution in preference order; false when there is none.
func (m *matcher) solve() (solution, bool) {
	for {
		if m.sizeParts() && m.solveValues() {
			return solution{alt: append([]int(nil), m.alt...), assign: append([]int(nil), m.assign...)}, true
		}
		if !m.nextAlt() {
			return solution{}, false
		}
	}
}

// nextAlt moves to the next choice of subrequests (the last part varies fastest).
func (m *matcher) nextAlt() bool {
	for i := len(m.alt) - 1; i >= 0; i-- {
		if m.alt[i]+1 < len(m.pc.parts[i].alts) {
			m.alt[i]++
			for j := i + 1; j < len(m.alt); j++ {
				m.alt[j] = 0
			}
			return true
		}
	}
	return false
}

// solveValues tries every combination of constraint values under the current
// subrequests.
func (m *matcher) solveValues() bool {
	domains := make([][]attrValue, len(m.pc.constraints))
	for k := range m.pc.constraints {
		domains[k] = m.domain(k)
		if domains[k] != nil && len(domains[k]) == 0 {
			return false // a constraint no matching device can meet
		}
	}
	pos := make([]int, len(domains))
	for tries := 0; tries < maxValueCombos; tries++ {
		for k, d := range domains {
			m.value[k] = attrValue{}
			if d != nil {
				m.value[k] = d[pos[k]]
			}
		}
		if m.fill() {
			return true
		}
		if !nextPos(pos, domains) {
			return false
		}
	}
	return false
}

// nextPos advances a mixed-radix counter over the domains; false when done.
func nextPos(pos []int, domains [][]attrValue) bool {
	for k := len(pos) - 1; k >= 0; k-- {
		if pos[k]+1 < len(domains[k]) {
			pos[k]++
			for j := k + 1; j < len(pos); j++ {
				pos[j] = 0
			}
			return true
		}
	}
	return false
}

// domain lists the values of constraint k's attribute among the candidates some part
// it covers may take, in candidate order; nil when it covers no consuming part.
func (m *matcher) domain(k int) []attrValue {
	c := &m.pc.constraints[k]
	covers := false
	out := []attrValue{}
	for i := range m.pc.parts {
		if !c.covers(&m.pc.parts[i], m.alt[i]) {
			continue
		}
		covers = true
		for _, e := range m.ev {
			v := e.attrs[k]
			if v.present && e.ok[m.pc.altIndex(i, m.alt[i])] && !containsValue(out, v) {
				out = append(out, v)
			}
		}
	}
	if !covers {
		return nil
	}
	return out
}

func containsValue(vs []attrValue, v attrValue) bool {
	for _, w := range vs {
		if w == v {
			return true
		}
	}
	return false
}

// eligible reports whether candidate c may serve part p under the current choice.
func (m *matcher) eligible(c, p int) bool {
	part := &m.pc.parts[p]
	if part.admin || !m.ev[c].ok[m.pc.altIndex(p, m.alt[p])] {
		return false
	}
	for k := range m.pc.constraints {
		if m.pc.constraints[k].covers(part, m.alt[p]) && m.ev[c].attrs[k] != m.value[k] {
			return false
		}
	}
	return true
}

// fill goes through the candidates in order and keeps each that can get a slot.
func (m *matcher) fill() bool {
	for i := range m.assign {
		m.assign[i] = -1
	}
	for i := range m.load {
		m.load[i] = 0
	}
	picked := 0
	for c := range m.ev {
		if picked == m.want {
			break
		}
		for i := range m.seen {
			m.seen[i] = false
		}
		if m.augment(c) {
			picked++
		}
	}
	return picked == m.want && m.full()
}

// full reports whether every consuming part has all its devices.
func (m *matcher) full() bool {
	for i := range m.pc.parts {
		if p := &m.pc.parts[i]; !p.admin && m.load[i] != m.need[i] {
			return false
		}
	}
	return true
}

// augment gives candidate c a slot, moving earlier picks to other parts if needed.
func (m *matcher) augment(c int) bool {
	for p := range m.pc.parts {
		if m.seen[p] || !m.eligible(c, p) {
			continue
		}
		m.seen[p] = true
		if m.load[p] < m.need[p] {
			m.assign[c] = p
			m.load[p]++
			return true
		}
		for o := range m.assign {
			if m.assign[o] == p && o != c && m.augment(o) {
				m.assign[c] = p
				return true
			}
		}
	}
	return false
}

// sizeParts sets each consuming part's need under the current subrequests: its count,
// or for an All part every candidate it matches, when it matches some and no held
// device. A claim may not get more than AllocationResultsMaxSize devices, as upstream.
func (m *matcher) sizeParts() bool {
	m.want = 0
	perClaim := make([]int64, len(m.pc.claims))
	for i := range m.pc.parts {
		p := &m.pc.parts[i]
		m.need[i] = p.count
		if p.all && !p.admin {
			free, held := m.pc.allMatches(i, m.alt[i], m.ev, m.held)
			if held > 0 || free == 0 {
				return false
			}
			m.need[i] = free
		}
		if perClaim[p.claim] += m.need[i]; perClaim[p.claim] > resourcev1.AllocationResultsMaxSize {
			return false
		}
		if !p.admin {
			m.want += int(m.need[i])
		}
	}
	return true
}

// allMatches counts the free candidates and held devices part i's alternative a
// matches.
func (pc *PodClaims) allMatches(i, a int, ev, held []*evaluated) (free, heldN int64) {
	k := pc.altIndex(i, a)
	for _, e := range ev {
		if e.ok[k] {
			free++
		}
	}
	for _, e := range held {
		if e.ok[k] {
			heldN++
		}
	}
	return free, heldN
}
