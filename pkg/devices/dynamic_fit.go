package devices

import (
	"cmp"
	"slices"
	"strings"
)

// How Fit serves DRA requests (a Request with a Filter) from dynamic GPUs: a whole GPU
// while nothing is carved on it (freeWhole), and MIG instances the GPU would carve. Each
// dynamic GPU plans the request's instances on top of what it has carved (largest
// profiles first, each at the placement leaving the most room, dynamic_place.go), and
// the plans are the filter's candidates: any part of a plan can be carved together, so
// whichever candidates the filter chooses commit. Fixed instances of the profile come
// first (using them costs no GPU its room), then the plans, fullest GPU first.

// dynamicPlan is what one dynamic GPU would carve for a request: placements in order
// of preference.
type dynamicPlan struct {
	pos int
	at  []int
}

// dynamicPlans are the dynamic GPUs' plans for r's MIG instances, fullest GPU first
// (least free), then by position. A request for one instance lists every placement
// that can be carved, best first, so a filter that rules out the best still has the
// others.
func (n *NodeDevices) dynamicPlans(r Request) []dynamicPlan {
	var out []dynamicPlan
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) || g.kind != unitDynamic || g.wholeUsed {
			continue
		}
		// GPUs of one geometry with the same instances carved plan alike (most often:
		// nothing carved), so each such state is planned once.
		k := slices.IndexFunc(out, func(p dynamicPlan) bool {
			o := &n.gpus[p.pos]
			return o.space == g.space && o.carved == g.carved
		})
		if k >= 0 {
			out = append(out, dynamicPlan{pos: i, at: out[k].at})
			continue
		}
		if at := g.planFor(r); len(at) > 0 {
			out = append(out, dynamicPlan{pos: i, at: at})
		}
	}
	slices.SortStableFunc(out, func(a, b dynamicPlan) int { return cmp.Compare(n.freeMilli[a.pos], n.freeMilli[b.pos]) })
	return out
}

// planFor is what g would carve for r: its plan, or for a single instance every
// placement that can be carved, best first.
func (g *gpuState) planFor(r Request) []int {
	wants := g.profileWants(r)
	if len(wants) != 1 || wants[0].count != 1 {
		return g.space.plan(g.carved, wants)
	}
	var at []int
	for _, o := range g.space.options(g.carved, wants[0].profile) {
		at = append(at, o.at)
	}
	return at
}

// profileWants is r's MIG counts as profiles of g's geometry; profiles g's model lacks
// are left out.
func (g *gpuState) profileWants(r Request) []profileWant {
	var out []profileWant
	for _, mc := range r.MIG {
		if k := g.profileIndex(mc.Profile); k >= 0 && !mc.Shared {
			out = append(out, profileWant{profile: k, count: int(mc.Count)})
		}
	}
	return out
}

// profileIndex is the position of profile (any spelling) in g's geometry; -1 if none.
func (g *gpuState) profileIndex(profile string) int {
	p, ok := g.model.Profile(profile)
	if !ok {
		return -1
	}
	return slices.IndexFunc(g.model.MIG.Profiles, func(q Profile) bool { return q.Name == p.Name })
}

// appendPlanned appends the planned placements of profile (any spelling) to out.
func (n *NodeDevices) appendPlanned(out []Candidate, plans []dynamicPlan, profile string) []Candidate {
	for _, pl := range plans {
		g := &n.gpus[pl.pos]
		k := g.profileIndex(profile)
		for _, at := range pl.at {
			if g.space.placements[at].profile == k {
				out = append(out, Candidate{GPU: g.spec, Instance: &g.space.placements[at].inst, Device: g.placementDevice(at)})
			}
		}
	}
	return out
}

// dynamicCandidates are the placements GPU pos would carve for a single-instance
// filtered request, best first.
func (n *NodeDevices) dynamicCandidates(pos int, r Request) []Candidate {
	g := &n.gpus[pos]
	if g.wholeUsed {
		return nil
	}
	var out []Candidate
	if k := g.profileIndex(r.MIG[0].Profile); k >= 0 {
		for _, o := range g.space.options(g.carved, k) {
			out = append(out, Candidate{GPU: g.spec, Instance: &g.space.placements[o.at].inst, Device: g.placementDevice(o.at)})
		}
	}
	return out
}

// dynamicNote says why an extended-resource request gets nothing from the node's
// dynamic GPUs, for its refusal; "" when the node has none r could use.
func (n *NodeDevices) dynamicNote(r Request) string {
	var ids []string
	for i := range n.gpus {
		if g := &n.gpus[i]; g.kind == unitDynamic && eligible(g, r) {
			ids = append(ids, GPUID(g.spec.Index))
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return "; " + strings.Join(ids, ", ") + ": MIG layout chosen at allocation time (" + LayoutDynamic +
		"): only DRA ResourceClaims get these GPUs and their MIG instances, extended resources do not (the device plugin needs a fixed layout)"
}
