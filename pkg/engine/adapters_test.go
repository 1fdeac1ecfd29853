package engine

import (
	"slices"
	"testing"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// Property: the resource that decides a pod set's flavor is the one a sort by name
// finds: the last GPU resource of a known flavor, else the first resource if its flavor
// is known.
func TestDecidingResourceMatchesSortedScan(t *testing.T) {
	flavors := map[string]api.ResourceFlavor{"a": {Meta: api.Meta{Name: "a"}}, "b": {Meta: api.Meta{Name: "b"}}}
	names := []resources.Name{resources.CPU, resources.Memory, resources.NvidiaGPU, resources.MIGResource("1g.5gb"), resources.GPUMilli}
	rapid.Check(t, func(rt *rapid.T) {
		var rs []admission.ResourceAssignment
		for _, n := range names {
			if rapid.Bool().Draw(rt, "has "+string(n)) {
				rs = append(rs, admission.ResourceAssignment{Resource: n, Flavor: rapid.SampledFrom([]string{"a", "b", "gone"}).Draw(rt, "flavor")})
			}
		}
		rs = rapid.Permutation(rs).Draw(rt, "order")
		sorted := slices.Clone(rs)
		slices.SortFunc(sorted, func(x, y admission.ResourceAssignment) int { return cmpName(x.Resource, y.Resource) })
		want, wantOK := admission.ResourceAssignment{}, false
		for _, r := range sorted {
			if _, ok := flavors[r.Flavor]; ok && r.Resource.IsGPU() {
				want, wantOK = r, true
			}
		}
		if !wantOK && len(sorted) > 0 {
			_, wantOK = flavors[sorted[0].Flavor]
			want = sorted[0]
		}
		got, ok := decidingResource(rs, flavors)
		if ok != wantOK || (ok && got != want) {
			rt.Fatalf("decidingResource(%v) = %v %v, want %v %v", rs, got, ok, want, wantOK)
		}
	})
}

func cmpName(a, b resources.Name) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
