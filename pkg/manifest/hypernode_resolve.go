package manifest

import (
	"maps"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"k8s.io/apimachinery/pkg/labels"
)

// resolveHyperNodes runs once every file is read, before PodGroups are applied: it
// resolves the HyperNodes' members into nodes, checks the tree (no cycle, members of a
// lower tier, a node in one HyperNode per tier, one name per tier), adds the HyperNode
// Topology and the tier labels of the v1 Nodes (api/hypernode.go), and gives every
// Volcano networkTopology its tier.
func (l *loader) resolveHyperNodes() {
	hns := l.volcano.hyperNodes
	sort.Slice(hns, func(i, j int) bool { return hns[i].meta.Name < hns[j].meta.Name })
	if len(hns) > 0 {
		nodes := l.nodeUniverse()
		children := hyperNodeChildren(hns)
		cyclic := reportHyperNodeCycles(hns, children)
		checkMemberTiers(hns, children, cyclic)
		leaves := hyperNodeLeaves(hns, children, cyclic, nodes)
		for i, h := range hns {
			l.objs.HyperNodes = append(l.objs.HyperNodes, api.HyperNode{Meta: h.meta, Tier: h.tier, TierName: h.tierName, Nodes: leaves[i]})
		}
		checkNodeTiers(hns, leaves)
		checkTierNames(hns)
		l.addHyperNodeTopology()
	}
	l.resolveVolcanoRequests()
}

// namedNode is a node of the inputs as a HyperNode member sees it.
type namedNode struct {
	name   string
	labels labels.Set
}

// nodeUniverse is every node of the inputs: those the NodePools expand to (pools that do
// not expand were reported when read) and the v1 Nodes, sorted by name.
func (l *loader) nodeUniverse() []namedNode {
	var out []namedNode
	for _, p := range l.objs.NodePools {
		ns, err := cluster.ExpandPool(p)
		if err != nil {
			continue
		}
		for _, n := range ns {
			out = append(out, namedNode{name: n.Name, labels: n.Labels})
		}
	}
	for _, n := range l.objs.Nodes {
		out = append(out, namedNode{name: n.Object.Name, labels: n.Object.Labels})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// memberEdge is one HyperNode member that names another HyperNode.
type memberEdge struct {
	to   int
	path string
}

// hyperNodeChildren resolves the HyperNode members of each HyperNode (by index into hns,
// which is sorted by name); an exact name that names no HyperNode is an error.
func hyperNodeChildren(hns []*hyperNodeInput) [][]memberEdge {
	index := make(map[string]int, len(hns))
	for i, h := range hns {
		index[h.meta.Name] = i
	}
	out := make([][]memberEdge, len(hns))
	for i, h := range hns {
		for _, m := range h.members {
			if !m.hyperNode {
				continue
			}
			if m.exact != "" {
				if j, ok := index[m.exact]; ok {
					out[i] = append(out[i], memberEdge{to: j, path: m.path})
				} else {
					h.c.add(m.path+".selector.exactMatch.name", "HyperNode %q not found", m.exact)
				}
				continue
			}
			for j, o := range hns {
				if m.matchName(o.meta.Name) {
					out[i] = append(out[i], memberEdge{to: j, path: m.path})
				}
			}
		}
	}
	return out
}

// reportHyperNodeCycles reports each cycle of HyperNode members once, at the member of
// its first HyperNode by name that closes it, and returns the HyperNodes on a cycle.
func reportHyperNodeCycles(hns []*hyperNodeInput, children [][]memberEdge) map[int]bool {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]int, len(hns))
	cyclic := map[int]bool{}
	var path []int
	var visit func(i int)
	visit = func(i int) {
		state[i] = onPath
		path = append(path, i)
		for _, e := range children[i] {
			switch state[e.to] {
			case unseen:
				visit(e.to)
			case onPath:
				k := len(path) - 1
				for path[k] != e.to {
					k--
				}
				names := make([]string, 0, len(path)-k+1)
				for _, n := range path[k:] {
					names = append(names, hns[n].meta.Name)
					cyclic[n] = true
				}
				names = append(names, hns[e.to].meta.Name)
				hns[i].c.add(e.path, "HyperNode members form a cycle: %s", strings.Join(names, " -> "))
			}
		}
		path = path[:len(path)-1]
		state[i] = done
	}
	for i := range hns {
		if state[i] == unseen {
			visit(i)
		}
	}
	return cyclic
}

// checkMemberTiers: a HyperNode's HyperNode members sit in a lower tier, as in Volcano's
// tree (a tier-2 spine holds tier-1 switches).
func checkMemberTiers(hns []*hyperNodeInput, children [][]memberEdge, cyclic map[int]bool) {
	for i, h := range hns {
		for _, e := range children[i] {
			o := hns[e.to]
			if !cyclic[i] && o.tier >= h.tier && h.tier >= 1 {
				h.c.add(e.path, "HyperNode %q has tier %d: a member must have a lower tier than this HyperNode's %d", o.meta.Name, o.tier, h.tier)
			}
		}
	}
}

// hyperNodeLeaves lists the nodes inside each HyperNode, directly or through members
// (HyperNodes on a cycle contribute their direct nodes only), sorted. An exact node name
// that names no node of the inputs is an error when the inputs define nodes; with none,
// HyperNodes are read for their tiers alone.
func hyperNodeLeaves(hns []*hyperNodeInput, children [][]memberEdge, cyclic map[int]bool, nodes []namedNode) [][]string {
	direct := make([]map[string]bool, len(hns))
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		known[n.name] = true
	}
	for i, h := range hns {
		direct[i] = map[string]bool{}
		for _, m := range h.members {
			if m.hyperNode {
				continue
			}
			if m.exact != "" && len(nodes) > 0 && !known[m.exact] {
				h.c.add(m.path+".selector.exactMatch.name", "node %q not found (no v1 Node and no NodePool node of that name)", m.exact)
			}
			for _, n := range nodes {
				if m.matchName(n.name) || (m.labels != nil && m.labels.Matches(n.labels)) {
					direct[i][n.name] = true
				}
			}
		}
	}
	memo := make([]map[string]bool, len(hns))
	var all func(i int) map[string]bool
	all = func(i int) map[string]bool {
		if memo[i] != nil {
			return memo[i]
		}
		out := maps.Clone(direct[i])
		memo[i] = out // set before recursing: a cycle ends here
		if !cyclic[i] {
			for _, e := range children[i] {
				maps.Copy(out, all(e.to))
			}
		}
		return out
	}
	leaves := make([][]string, len(hns))
	for i := range hns {
		leaves[i] = sortedKeys(all(i))
	}
	return leaves
}

// checkNodeTiers: a node belongs to at most one HyperNode of each tier (its domain at
// that tier). The second HyperNode by name is the one reported.
func checkNodeTiers(hns []*hyperNodeInput, leaves [][]string) {
	owner := map[int32]map[string]string{}
	for i, h := range hns {
		if owner[h.tier] == nil {
			owner[h.tier] = map[string]string{}
		}
		for _, n := range leaves[i] {
			if first, ok := owner[h.tier][n]; ok {
				h.c.add("spec.members", "node %q is also in HyperNode %q of tier %d: a node belongs to one HyperNode per tier", n, first, h.tier)
				continue
			}
			owner[h.tier][n] = h.meta.Name
		}
	}
}

// checkTierNames: a tierName names one tier, and a tier has one name.
func checkTierNames(hns []*hyperNodeInput) {
	tierOf := map[string]*hyperNodeInput{}
	nameOf := map[int32]*hyperNodeInput{}
	for _, h := range hns {
		if h.tierName == "" {
			continue
		}
		if first, ok := tierOf[h.tierName]; ok && first.tier != h.tier {
			h.c.add("spec.tierName", "%q is tier %d in HyperNode %q (%s), not tier %d", h.tierName, first.tier, first.meta.Name, first.meta.Source, h.tier)
			continue
		}
		if first, ok := nameOf[h.tier]; ok && first.tierName != h.tierName {
			h.c.add("spec.tierName", "tier %d is named %q in HyperNode %q (%s), not %q", h.tier, first.tierName, first.meta.Name, first.meta.Source, h.tierName)
			continue
		}
		tierOf[h.tierName], nameOf[h.tier] = h, h
	}
}

// addHyperNodeTopology adds the HyperNode Topology and labels every v1 Node inside a
// HyperNode with its tiers (the label maps are copied: the input's stay as read).
func (l *loader) addHyperNodeTopology() {
	first := l.volcano.hyperNodes[0]
	if prev, taken := l.seen["Topology/"+api.HyperNodeTopology]; taken {
		first.c.add("", "the HyperNodes become Topology %q, which is already defined at %s", api.HyperNodeTopology, prev)
		return
	}
	_, tiers := api.HyperNodeTiers(l.objs.HyperNodes)
	if len(tiers) == 0 || tiers[len(tiers)-1] < 1 {
		return
	}
	l.seen["Topology/"+api.HyperNodeTopology] = first.meta.Source
	l.objs.Topologies = append(l.objs.Topologies, api.Topology{
		Meta:   api.Meta{Name: api.HyperNodeTopology, Source: first.meta.Source},
		Levels: api.HyperNodeLevels(tiers[len(tiers)-1]),
	})
	// NodePool nodes are labelled when the pools expand (cluster.NodesOf), from the
	// same api.HyperNodeLabels over l.objs.HyperNodes.
	byNode := api.HyperNodeLabels(l.objs.HyperNodes)
	for i := range l.objs.Nodes {
		o := &l.objs.Nodes[i].Object
		add, ok := byNode[o.Name]
		if !ok {
			continue
		}
		merged := maps.Clone(o.Labels)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, add)
		o.Labels = merged
	}
}
