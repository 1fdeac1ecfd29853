package cluster

import "sync"

// staticMemo remembers node sets that depend on the nodes alone (labels, taints,
// conditions), so that a filter such as "nodes a flavor's pods may use" is computed once
// per snapshot instead of once per placement. Snapshots made from overlays have the same
// nodes and share their base's memo; the mutex keeps concurrent readers of a snapshot
// safe, as they are for everything else a snapshot holds.
type staticMemo struct {
	mu   sync.Mutex
	sets map[string]*NodeSet
}

// maxStaticSets bounds the memo: past it the memo starts over (a workload stream with
// ever new selectors gains nothing from it anyway).
const maxStaticSets = 64

// StaticSet returns the nodes for which keep is true. keep must depend only on the
// node, and key must determine keep: the answer is remembered under key for this
// snapshot and the snapshots that share its nodes. The set is read-only.
func (s *Snapshot) StaticSet(key string, keep func(*Node) bool) *NodeSet {
	m := s.static
	m.mu.Lock()
	defer m.mu.Unlock()
	if set, ok := m.sets[key]; ok {
		return set
	}
	if m.sets == nil || len(m.sets) >= maxStaticSets {
		m.sets = map[string]*NodeSet{}
	}
	set := &NodeSet{}
	set.reset(s.nodes.len())
	for i := range s.nodes.len() {
		if keep(s.nodes.at(i).node) {
			set.add(i)
		}
	}
	m.sets[key] = set
	return set
}

// NodesToken identifies a snapshot's node set: snapshots that share their nodes (pod
// changes applied, overlays committed) have equal tokens; adding, removing or changing a
// node gives a new one. The zero token is no snapshot's.
type NodesToken struct{ m *staticMemo }

// NodesToken is s's node set identity (see NodesToken).
func (s *Snapshot) NodesToken() NodesToken { return NodesToken{s.static} }
