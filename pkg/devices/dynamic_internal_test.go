package devices

import (
	"slices"
	"testing"
)

// bruteLayouts lists every valid layout of m as bit sets over s's placements, checking
// each candidate with ValidateLayout itself, apart from the space's own rules.
func bruteLayouts(m *Model, s *migSpace) []uint64 {
	var out []uint64
	var walk func(i int, layout uint64)
	walk = func(i int, layout uint64) {
		if i == len(s.placements) {
			out = append(out, layout)
			return
		}
		walk(i+1, layout)
		if m.ValidateLayout(s.instances(layout|1<<i)) == nil {
			walk(i+1, layout|1<<i)
		}
	}
	walk(0, 0)
	return out
}

// Every catalogued MIG geometry's space holds exactly the layouts ValidateLayout
// accepts, and fits a bit set.
func TestMIGSpaceMatchesValidateLayout(t *testing.T) {
	for _, m := range MIGModels() {
		t.Run(string(m.ID), func(t *testing.T) {
			s, err := spaceFor(&m)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.placements) > 32 {
				t.Errorf("%d placements: keep well under %d", len(s.placements), maxPlacements)
			}
			want := bruteLayouts(&m, s)
			got := slices.Clone(s.layouts)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("space has %d layouts, ValidateLayout accepts %d", len(got), len(want))
			}
		})
	}
}

// The catalog's spaces are shared; a model whose geometry was changed gets its own.
func TestSpaceForSharesCatalogGeometry(t *testing.T) {
	a, _ := LookupModel("A100")
	b, _ := LookupModel("A100")
	sa, _ := spaceFor(&a)
	sb, _ := spaceFor(&b)
	if sa != sb {
		t.Error("two look-ups of one model got different spaces")
	}
	b.MIG.Profiles = b.MIG.Profiles[:1] // 1g.5gb only
	sc, err := spaceFor(&b)
	if err != nil {
		t.Fatal(err)
	}
	if sc == sa || len(sc.placements) != 7 {
		t.Errorf("changed geometry: shared=%v, %d placements, want its own with 7", sc == sa, len(sc.placements))
	}
	if _, err := spaceFor(&Model{ID: "T4"}); err == nil {
		t.Error("a model without MIG got a space")
	}
}
