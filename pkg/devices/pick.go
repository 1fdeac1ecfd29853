package devices

import "slices"

// topoLevel is the grouping pickTopology works on: NVLink domains, then PCIe switches.
type topoLevel uint8

const (
	levelNVLink topoLevel = iota
	levelSwitch
)

func (g *gpuState) groupID(l topoLevel) int {
	if l == levelNVLink {
		return g.spec.NVLinkDomain
	}
	return g.spec.PCIeSwitch
}

// groupCount is one group of candidates: its id and how many candidates it holds (or,
// after chooseGroups, how many to take from it).
type groupCount struct{ id, n int }

// scratchGroups sizes the stack buffers of the pick: nodes have a handful of NVLink
// domains and switches, so Fit does not allocate for them (more spill to the heap).
const scratchGroups = 16

// pickTopology appends k of the candidate positions (ascending) to out: inside one
// NVLink domain when one has room (the tightest such domain, so larger free domains stay
// whole), else spanning the domains with most free GPUs first. Inside a domain the same
// rule applies to PCIe switches. Ties go to the lower id; picks are returned ascending.
// It works on stack buffers: it runs for every node a whole-GPU pod is tried on.
func pickTopology(gpus []gpuState, cands []int, k int, out []int) []int {
	start := len(out)
	var gbuf [scratchGroups]groupCount
	var sub [scratchGroups]int
	for _, d := range chooseGroups(countGroups(gpus, cands, levelNVLink, gbuf[:0]), k) {
		in := sub[:0]
		for _, p := range cands {
			if gpus[p].spec.NVLinkDomain == d.id {
				in = append(in, p)
			}
		}
		out = pickSwitches(gpus, in, d.n, out)
	}
	slices.Sort(out[start:])
	return out
}

// pickSwitches appends k of cands (ascending, one NVLink domain) by the same rule over
// PCIe switches, taking the lowest positions inside a switch.
func pickSwitches(gpus []gpuState, cands []int, k int, out []int) []int {
	var gbuf [scratchGroups]groupCount
	for _, s := range chooseGroups(countGroups(gpus, cands, levelSwitch, gbuf[:0]), k) {
		m := s.n
		for _, p := range cands {
			if m == 0 {
				break
			}
			if gpus[p].spec.PCIeSwitch == s.id {
				out = append(out, p)
				m--
			}
		}
	}
	return out
}

// countGroups appends to dst the groups of cands at level l, ordered by id.
func countGroups(gpus []gpuState, cands []int, l topoLevel, dst []groupCount) []groupCount {
	for _, p := range cands {
		id := gpus[p].groupID(l)
		i := 0
		for i < len(dst) && dst[i].id < id {
			i++
		}
		if i < len(dst) && dst[i].id == id {
			dst[i].n++
			continue
		}
		dst = slices.Insert(dst, i, groupCount{id: id, n: 1})
	}
	return dst
}

// chooseGroups turns groups (ordered by id) into what to take, in order: k from the
// tightest group holding k (the lowest id among equals), or else the largest groups in
// turn (a stable order, so ties go to the lower id), each with how many to take. It
// rewrites groups in place.
func chooseGroups(groups []groupCount, k int) []groupCount {
	best := -1
	for i, g := range groups {
		if g.n >= k && (best < 0 || g.n < groups[best].n) {
			best = i
		}
	}
	if best >= 0 {
		groups[0] = groupCount{id: groups[best].id, n: k}
		return groups[:1]
	}
	// Insertion sort, largest first: stable and allocation-free on a few groups.
	for i := 1; i < len(groups); i++ {
		for j := i; j > 0 && groups[j].n > groups[j-1].n; j-- {
			groups[j], groups[j-1] = groups[j-1], groups[j]
		}
	}
	out := groups[:0]
	for _, g := range groups {
		if k == 0 {
			break
		}
		m := min(k, g.n)
		out = append(out, groupCount{id: g.id, n: m})
		k -= m
	}
	return out
}
