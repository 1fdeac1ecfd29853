package placement

import (
	"fmt"
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// PlaceWorkload places a workload's whole gang on the overlay under its admitted flavors:
// for every pod set, its gang pods (MinCount, or the share of the workload's MinMember),
// all or nothing; then the extra pods of each set while they fit. On success the pods
// stay assumed on the overlay; on failure the overlay is exactly as before and the
// Diagnosis says why.
func PlaceWorkload(ov *cluster.Overlay, w *api.Workload, fc FlavorConstraints, opts Options) (Placement, *Diagnosis) {
	scorers := opts.Scorers
	if len(scorers) == 0 {
		scorers = DefaultScorers()
	}
	gang := gangCounts(w)
	total := 0
	for _, g := range gang {
		total += g
	}
	placers := make([]*setPlacer, len(w.PodSets))
	for si := range w.PodSets {
		ps := &w.PodSets[si]
		req, err := opts.podRequest(w, ps, fc[ps.Name])
		if err != nil {
			return Placement{}, &Diagnosis{Workload: w.ID(), PodSet: ps.Name, GangSize: total, TotalNodes: ov.NumNodes(), Err: err.Error()}
		}
		placers[si] = &setPlacer{ov: ov, w: w, ps: ps, req: req, fc: fc[ps.Name], scorers: scorers, rnd: opts.Rand, fits: opts.FitCache, quiet: opts.Quiet}
	}
	groups, why := podSetGroups(w) // topo_group.go
	if why != "" {
		return Placement{}, &Diagnosis{Workload: w.ID(), GangSize: total, TotalNodes: ov.NumNodes(), Err: why}
	}
	mark := ov.Mark()
	perSet := make([][]PodPlacement, len(w.PodSets))
	for si, p := range placers {
		var d *Diagnosis
		switch {
		case groups[si] != nil && groups[si][0] != si:
			continue // placed with its group's first member
		case groups[si] != nil:
			var pods [][]PodPlacement
			pods, d = placeGroup(placers, groups[si], gang)
			for k, m := range groups[si] {
				if d == nil {
					perSet[m] = pods[k]
				}
			}
		case sharedClaimsOf(p.ps, w.Namespace) != nil:
			perSet[si], d = p.placeShared(gang[si], opts)
		default:
			perSet[si], d = p.place(gang[si])
		}
		if d != nil {
			ov.Undo(mark)
			d.Placed += countPods(perSet)
			d.GangSize = total
			return Placement{}, d
		}
	}
	pl := Placement{Workload: w.ID()}
	for _, pods := range perSet {
		pl.Pods = append(pl.Pods, pods...)
	}
	pl.Pods = placeExtras(placers, gang, pl.Pods)
	return pl, nil
}

func countPods(perSet [][]PodPlacement) int {
	n := 0
	for _, pods := range perSet {
		n += len(pods)
	}
	return n
}

// gangCounts is, per pod set, how many pods belong to the gang: MinMember taken from the
// pod sets in order when set, else each set's GangCount.
func gangCounts(w *api.Workload) []int {
	out := make([]int, len(w.PodSets))
	left := int(w.MinMember)
	for si, ps := range w.PodSets {
		if w.MinMember > 0 {
			out[si] = min(int(ps.Count), left)
			left -= out[si]
			continue
		}
		out[si] = int(ps.GangCount())
	}
	return out
}

// placeExtras adds the pods beyond the gang, each set until one does not fit, inside the
// domain its gang landed in when the set has a topology request (extras of a set with a
// slice constraint are not placed: a partial slice would break it). Each set's extras
// follow its gang pods in the result.
func placeExtras(placers []*setPlacer, gang []int, pods []PodPlacement) []PodPlacement {
	out := make([]PodPlacement, 0, len(pods))
	at := 0
	for si, p := range placers {
		for at < len(pods) && pods[at].PodSet == p.ps.Name {
			out = append(out, pods[at])
			at++
		}
		if gang[si] >= int(p.ps.Count) || (p.ps.Topology != nil && p.ps.Topology.SliceLevel != "") {
			continue
		}
		c := newChooser(p.ov, p.scope, p.req, p.scorers, p.rnd, p.fits) // nil scope: anywhere
		for idx := gang[si]; idx < int(p.ps.Count); idx++ {
			pp, ok := assumeBest(p.ov, c, p.w.ID(), p.ps.Name, idx)
			if !ok {
				break
			}
			out = append(out, pp)
		}
		p.fits.giveBack(c)
	}
	return out
}

// assumeBest puts one pod on the chooser's best node and refreshes that node's slot.
func assumeBest(ov *cluster.Overlay, c *chooser, id api.WorkloadID, set string, idx int) (PodPlacement, bool) {
	b := c.best()
	if b < 0 {
		return PodPlacement{}, false
	}
	assign, ok := c.pick(b)
	if !ok {
		c.drop(b) // the prediction was wrong: the device model refuses this node
		return assumeBest(ov, c, id, set, idx)
	}
	node := c.slots[b].at()
	ref := cluster.PodRef{Workload: id, PodSet: set, Index: idx}
	if err := ov.AssumeAt(ref, node, c.req.Requests, assign); err != nil {
		// The device model said it fits and the overlay disagrees: treat the node as
		// full rather than fail the whole placement on an internal inconsistency.
		c.drop(b)
		return assumeBest(ov, c, id, set, idx)
	}
	pp := PodPlacement{PodSet: set, Index: idx, Node: ov.Node(node).Name, Devices: assign}
	c.eval(b)
	return pp, true
}

func allNodes(ov *cluster.Overlay) []int {
	out := make([]int, ov.NumNodes())
	for i := range out {
		out[i] = i
	}
	return out
}

// setPlacer places the gang pods of one pod set.
type setPlacer struct {
	ov      *cluster.Overlay
	w       *api.Workload
	ps      *api.PodSet
	req     *PodRequest
	fc      FlavorConstraint
	scorers []WeightedScorer
	rnd     *rand.Rand
	fits    *FitCache // optional
	quiet   bool      // no per-node diagnosis on failure (Options.Quiet)
	next    int       // next pod index
	scope   []int     // nodes of the domain the gang landed in; nil = anywhere
}

// place puts n pods, honouring the set's topology request.
func (p *setPlacer) place(n int) ([]PodPlacement, *Diagnosis) {
	if n == 0 {
		return nil, nil
	}
	t := p.ps.Topology
	if unconstrained(t) {
		return p.placeUnconstrained(n) // topo_unconstrained.go
	}
	if t == nil || (t.Level == "" && t.HighestTierAllowed == 0 && t.SliceLevel == "") {
		return p.placeIn(nil, n)
	}
	if why := sliceOrderProblem(p.topology(), t); why != "" { // topo_slices.go
		d := p.diagnose(nil)
		d.Topology = why
		return nil, d
	}
	levels, fallback := p.levels()
	var why string
	for _, level := range levels {
		pods, ok, w := p.placeInDomains(p.ov.Domains(level), level, n)
		if ok {
			return pods, nil
		}
		why = w
	}
	if fallback {
		return p.placeSliced(nil, n)
	}
	d := p.diagnose(nil)
	d.Topology = why
	return nil, d
}

// levels lists the topology levels to try, tightest first, and whether placing without
// a common domain is allowed after them (preferred / soft).
func (p *setPlacer) levels() ([]string, bool) {
	t := p.ps.Topology
	topo := p.topology()
	if t.Level == "" && t.HighestTierAllowed == 0 {
		return nil, true // only a slice constraint
	}
	// Volcano: tiers from the narrowest (1) up to HighestTierAllowed.
	if t.HighestTierAllowed > 0 {
		tiers := topo.Tiers()
		return tiers[:min(int(t.HighestTierAllowed), len(tiers))], t.Mode == api.TopologyPreferred
	}
	if t.Mode == api.TopologyRequired {
		return []string{t.Level}, false
	}
	// Kueue preferred: the requested level, then broader ones.
	var out []string
	for k := len(topo.Levels) - 1; k >= 0; k-- {
		if topo.Levels[k] == t.Level || len(out) > 0 {
			out = append(out, topo.Levels[k])
		}
	}
	if len(out) == 0 {
		out = []string{t.Level}
	}
	return out, true
}

func (p *setPlacer) topology() cluster.Topology {
	if p.fc.TopologyName != "" {
		if t, ok := p.ov.Base().TopologyByName(p.fc.TopologyName); ok {
			return t
		}
	}
	if p.ps.Topology.Level != "" {
		return p.ov.Base().TopologyFor(p.ps.Topology.Level)
	}
	if ts := p.ov.Base().Topologies(); len(ts) > 0 {
		return ts[0]
	}
	return p.ov.Base().TopologyFor(cluster.LabelHostname)
}

// placeInDomains tries the domains that could hold n pods, best fit first (the smallest
// estimated room that is enough), so large domains stay whole.
func (p *setPlacer) placeInDomains(domains []cluster.Domain, level string, n int) ([]PodPlacement, bool, string) {
	order := rankDomains(p.ov, domains, p.req, n)
	for _, d := range order {
		mark, next := p.ov.Mark(), p.next
		pods, diag := p.placeSliced(d.Nodes, n)
		if diag == nil {
			p.scope = d.Nodes
			return pods, true, ""
		}
		p.ov.Undo(mark)
		p.next = next
	}
	best, room := bestRoom(p.ov, domains, p.req)
	if best == "" {
		return nil, false, fmt.Sprintf("no %s domain has room for %d pods", level, n)
	}
	return nil, false, fmt.Sprintf("no %s domain has room for %d pods (best %s: %d)", level, n, best, room)
}

// placeSliced honours a slice constraint (every SliceSize pods share a SliceLevel
// domain) inside nodes (nil: every node), or places the n pods freely.
func (p *setPlacer) placeSliced(nodes []int, n int) ([]PodPlacement, *Diagnosis) {
	t := p.ps.Topology
	if t == nil || t.SliceLevel == "" || t.SliceSize <= 0 {
		return p.placeIn(nodes, n)
	}
	if nodes == nil {
		nodes = allNodes(p.ov)
	}
	parent := cluster.Domain{Nodes: nodes}
	var out []PodPlacement
	for left := n; left > 0; {
		size := min(left, int(t.SliceSize))
		subs := p.ov.Base().SubDomains(parent, t.SliceLevel)
		ok := false
		var got []PodPlacement
		for _, d := range rankDomains(p.ov, subs, p.req, size) {
			mark, next := p.ov.Mark(), p.next
			if pp, diag := p.placeLayers(d.Nodes, size, innerSlices(t)); diag == nil {
				got, ok = pp, true
				break
			}
			p.ov.Undo(mark)
			p.next = next
		}
		if !ok {
			d := p.diagnose(nodes)
			d.Topology = fmt.Sprintf("no %s domain has room for a slice of %d pods", t.SliceLevel, size)
			return nil, d
		}
		out = append(out, got...)
		left -= size
	}
	return out, nil
}

// placeIn places n pods on nodes (nil: every node), one at a time on the best-scored
// node.
func (p *setPlacer) placeIn(nodes []int, n int) ([]PodPlacement, *Diagnosis) {
	c := newChooser(p.ov, nodes, p.req, p.scorers, p.rnd, p.fits)
	defer p.fits.giveBack(c)
	out := make([]PodPlacement, 0, n)
	for k := 0; k < n; k++ {
		pp, ok := assumeBest(p.ov, c, p.w.ID(), p.ps.Name, p.next)
		if !ok {
			d := p.diagnose(nodes)
			d.Placed = len(out)
			return nil, d
		}
		p.next++
		out = append(out, pp)
	}
	return out, nil
}
