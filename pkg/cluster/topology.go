package cluster

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Topology is an ordered list of node-label levels, broadest first, always ending with
// the implicit hostname level (Kueue's Topology; Volcano HyperNode tiers map onto it).
type Topology struct {
	Name   string
	Levels []string
	// ImplicitHostname is set when the hostname level was appended here rather than
	// listed by the user; Volcano tiers count only the listed levels.
	ImplicitHostname bool
}

// Tiers is the levels Volcano's highestTierAllowed counts, narrowest first (tier 1 is
// Tiers()[0]).
func (t Topology) Tiers() []string {
	levels := t.Levels
	if t.ImplicitHostname && len(levels) > 1 {
		levels = levels[:len(levels)-1]
	}
	out := make([]string, len(levels))
	for k, l := range levels {
		out[len(levels)-1-k] = l
	}
	return out
}

// Domain is one domain of a topology level: the nodes that share the values of that level
// and of every broader level of the same topology (so rack "r1" of block "b1" and rack
// "r1" of block "b2" are different domains).
type Domain struct {
	Level string
	// ID is the label values from the broadest level down to Level, joined by "/".
	ID string
	// Nodes are node indices of the snapshot, ascending.
	Nodes []int
}

// normaliseTopologies validates the topologies and appends the hostname level where it
// is missing. Levels must be non-empty and unique within a topology.
func normaliseTopologies(in []api.Topology) ([]Topology, error) {
	out := make([]Topology, 0, len(in))
	for _, t := range in {
		if len(t.Levels) == 0 {
			return nil, fmt.Errorf("topology %q (%s): levels: must list at least one node label", t.Name, t.Source)
		}
		seen := map[string]bool{}
		levels := make([]string, 0, len(t.Levels)+1)
		for k, l := range t.Levels {
			if l == "" {
				return nil, fmt.Errorf("topology %q (%s): levels[%d]: empty node label", t.Name, t.Source, k)
			}
			if seen[l] {
				return nil, fmt.Errorf("topology %q (%s): levels[%d]: duplicate level %q", t.Name, t.Source, k, l)
			}
			seen[l] = true
			levels = append(levels, l)
		}
		implicit := !seen[LabelHostname]
		if implicit {
			levels = append(levels, LabelHostname)
		}
		out = append(out, Topology{Name: t.Name, Levels: levels, ImplicitHostname: implicit})
	}
	return out, nil
}

// buildDomains indexes the domains of every level of every topology, plus hostname. A
// level that appears in several topologies is indexed with the first topology's path.
// Nodes without the level's label (or a broader one) belong to no domain of that level.
func buildDomains(nodes []*nodeState, topos []Topology) map[string][]Domain {
	out := map[string][]Domain{}
	for _, t := range topos {
		for depth, level := range t.Levels {
			if _, done := out[level]; done || level == LabelHostname {
				continue
			}
			out[level] = domainsOf(nodes, t.Levels[:depth+1])
		}
	}
	// Every node is its own hostname domain, whatever broader labels it lacks.
	out[LabelHostname] = domainsOf(nodes, []string{LabelHostname})
	return out
}

// domainsOf groups nodes by the values of path (broadest first), sorted by ID.
func domainsOf(nodes []*nodeState, path []string) []Domain {
	byID := map[string]*Domain{}
	var ids []string
	var sb strings.Builder
	for i, st := range nodes {
		sb.Reset()
		ok := true
		for k, key := range path {
			v, has := labelOrHostname(st.node, key)
			if !has {
				ok = false
				break
			}
			if k > 0 {
				sb.WriteByte('/')
			}
			sb.WriteString(v)
		}
		if !ok {
			continue
		}
		id := sb.String()
		d, seen := byID[id]
		if !seen {
			d = &Domain{Level: path[len(path)-1], ID: id}
			byID[id] = d
			ids = append(ids, id)
		}
		d.Nodes = append(d.Nodes, i)
	}
	sort.Strings(ids)
	out := make([]Domain, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out
}

// labelOrHostname reads a label; the hostname level falls back to the node name, as
// every node is its own hostname domain.
func labelOrHostname(n *Node, key string) (string, bool) {
	if v, ok := n.Labels[key]; ok {
		return v, true
	}
	if key == LabelHostname {
		return n.Name, true
	}
	return "", false
}

// Topologies returns the snapshot's topologies (read-only).
func (s *Snapshot) Topologies() []Topology { return s.topologies }

// TopologyByName returns the named topology.
func (s *Snapshot) TopologyByName(name string) (Topology, bool) {
	for _, t := range s.topologies {
		if t.Name == name {
			return t, true
		}
	}
	return Topology{}, false
}

// TopologyFor returns the first topology that has level, or a one-level topology of
// level plus hostname when none has it.
func (s *Snapshot) TopologyFor(level string) Topology {
	for _, t := range s.topologies {
		for _, l := range t.Levels {
			if l == level {
				return t
			}
		}
	}
	if level == LabelHostname {
		return Topology{Levels: []string{LabelHostname}}
	}
	return Topology{Levels: []string{level, LabelHostname}, ImplicitHostname: true}
}

// Domains returns the domains of a level (a node-label key), sorted by ID (read-only). A
// level no topology lists is grouped by its label value alone.
func (s *Snapshot) Domains(level string) []Domain {
	if d, ok := s.domains[level]; ok {
		return d
	}
	return domainsOf(s.nodes.flat(), []string{level})
}

// SubDomains returns the domains of level restricted to the nodes of parent, dropping
// those left empty: e.g. the racks of one block.
func (s *Snapshot) SubDomains(parent Domain, level string) []Domain {
	in := make(map[int]bool, len(parent.Nodes))
	for _, i := range parent.Nodes {
		in[i] = true
	}
	var out []Domain
	for _, d := range s.Domains(level) {
		var nodes []int
		for _, i := range d.Nodes {
			if in[i] {
				nodes = append(nodes, i)
			}
		}
		if len(nodes) > 0 {
			out = append(out, Domain{Level: d.Level, ID: d.ID, Nodes: nodes})
		}
	}
	return out
}

// Domains returns the domains of level over the overlay's base snapshot.
func (o *Overlay) Domains(level string) []Domain { return o.base.Domains(level) }

// NVLinkDomains groups the node's GPU indices by NVLink domain, domains in ascending
// order, GPUs ascending inside each.
func (n *Node) NVLinkDomains() [][]int {
	if n.Devices == nil {
		return nil
	}
	by := map[int][]int{}
	var keys []int
	for _, g := range n.Devices.GPUs() {
		if _, ok := by[g.NVLinkDomain]; !ok {
			keys = append(keys, g.NVLinkDomain)
		}
		by[g.NVLinkDomain] = append(by[g.NVLinkDomain], g.Index)
	}
	sort.Ints(keys)
	out := make([][]int, 0, len(keys))
	for _, k := range keys {
		g := by[k]
		sort.Ints(g)
		out = append(out, g)
	}
	return out
}
