package devices

import (
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// refPickTopology is the original, allocation-heavy pick (grouping through maps and
// closures), kept as the reference the allocation-free pickTopology must agree with.
func refPickTopology(gpus []gpuState, cands []int, k int) []int {
	domains := refGroupBy(cands, func(p int) int { return gpus[p].spec.NVLinkDomain })
	out := refPickFromGroups(domains, k, func(g refGroup, k int) []int {
		switches := refGroupBy(g.pos, func(p int) int { return gpus[p].spec.PCIeSwitch })
		return refPickFromGroups(switches, k, func(s refGroup, k int) []int { return s.pos[:k] })
	})
	sort.Ints(out)
	return out
}

type refGroup struct {
	id  int
	pos []int
}

func refPickFromGroups(groups []refGroup, k int, take func(refGroup, int) []int) []int {
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

func refGroupBy(pos []int, key func(int) int) []refGroup {
	idx := map[int]int{}
	var out []refGroup
	for _, p := range pos {
		id := key(p)
		i, ok := idx[id]
		if !ok {
			i = len(out)
			idx[id] = i
			out = append(out, refGroup{id: id})
		}
		out[i].pos = append(out[i].pos, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// Property: on any arrangement of NVLink domains and PCIe switches (up to 24 GPUs, so
// the stack buffers also spill) and any candidate subset, the allocation-free pick
// returns exactly the reference pick.
func TestPropPickTopologyMatchesReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 24).Draw(t, "gpus")
		gpus := make([]gpuState, n)
		var cands []int
		for i := range gpus {
			gpus[i].gpuStatic = &gpuStatic{spec: &GPU{Index: i,
				NVLinkDomain: rapid.IntRange(0, 20).Draw(t, "domain"),
				PCIeSwitch:   rapid.IntRange(0, 20).Draw(t, "switch")}}
			if rapid.Bool().Draw(t, "free") {
				cands = append(cands, i)
			}
		}
		if len(cands) == 0 {
			return
		}
		k := rapid.IntRange(1, len(cands)).Draw(t, "k")
		want := refPickTopology(gpus, cands, k)
		got := pickTopology(gpus, cands, k, nil)
		if !slices.Equal(got, want) {
			t.Fatalf("pick %d of %v: got %v, reference %v", k, cands, got, want)
		}
	})
}

// TestPickTopologyAppends checks that picks are appended after what out already holds.
func TestPickTopologyAppends(t *testing.T) {
	// Built directly: the shared builders (internal/testing) import this package, so
	// this internal test cannot use them.
	m, err := LookupModel("H100")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := NewGPUs(m, 8, Sharing{Mode: Exclusive}, 4)
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	got := pickTopology(n.gpus, []int{1, 2, 3, 5, 6}, 2, []int{42})
	// Domain 1 (positions 4..7) holds 5 and 6: the tightest domain with room for 2 is
	// domain 1 (2 free) rather than domain 0 (3 free).
	if want := []int{42, 5, 6}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
