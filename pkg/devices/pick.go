package devices

import "sort"

// group is a set of candidate GPU positions sharing one NVLink domain or PCIe switch.
type group struct {
	id  int
	pos []int // ascending
}

// pickTopology chooses k of the candidate positions (ascending): inside one NVLink
// domain when one has room (the tightest such domain, so larger free domains stay
// whole), else spanning the domains with most free GPUs first. Inside a domain the same
// rule applies to PCIe switches. Ties go to the lower id; picks are returned ascending.
func pickTopology(gpus []gpuState, cands []int, k int) []int {
	domains := groupBy(cands, func(p int) int { return gpus[p].spec.NVLinkDomain })
	out := pickFromGroups(domains, k, func(g group, k int) []int {
		switches := groupBy(g.pos, func(p int) int { return gpus[p].spec.PCIeSwitch })
		return pickFromGroups(switches, k, func(s group, k int) []int { return s.pos[:k] })
	})
	sort.Ints(out)
	return out
}

// pickFromGroups takes k from the tightest group holding k, or else from the largest
// groups in turn; take(g, m) picks m positions inside group g.
func pickFromGroups(groups []group, k int, take func(group, int) []int) []int {
	best := -1
	for i, g := range groups {
		if len(g.pos) >= k && (best < 0 || len(g.pos) < len(groups[best].pos)) {
			best = i
		}
	}
	if best >= 0 {
		return take(groups[best], k)
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].pos) > len(groups[j].pos) })
	var out []int
	for _, g := range groups {
		if k == 0 {
			break
		}
		m := min(k, len(g.pos))
		out = append(out, take(g, m)...)
		k -= m
	}
	return out
}

// groupBy splits ascending positions into groups by key, ordered by key.
func groupBy(pos []int, key func(int) int) []group {
	idx := map[int]int{}
	var out []group
	for _, p := range pos {
		id := key(p)
		i, ok := idx[id]
		if !ok {
			i = len(out)
			idx[id] = i
			out = append(out, group{id: id})
		}
		out[i].pos = append(out[i].pos, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
