package devices

import (
	"slices"
	"sync"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// table is the catalog built once and never written after: LookupModel used to build the
// whole catalog per call, which at 10,000 nodes cost a fifth of a placement benchmark,
// and every node kept its own copy of its model alive. Exported functions hand out deep
// copies (Model.clone), so no caller can change what another sees; the device model
// inside this package shares the table's models read-only.
var table = sync.OnceValue(catalog)

// sharedModel finds a catalog model as LookupModel does and returns the table's own,
// which nothing in this package writes; generic models are built per call.
func sharedModel(name string) (*Model, error) {
	if m, ok, err := lookupGeneric(name); ok {
		if err != nil {
			return nil, err
		}
		return &m, nil
	}
	i, err := modelIndex(name)
	if err != nil {
		return nil, err
	}
	return &table()[i], nil
}

// clone is a deep copy of m: nothing it holds is shared with m.
func (m Model) clone() Model {
	m.Products = slices.Clone(m.Products)
	m.Aliases = slices.Clone(m.Aliases)
	m.PCIDeviceIDs = slices.Clone(m.PCIDeviceIDs)
	if m.MIG != nil {
		g := *m.MIG
		g.Balanced = slices.Clone(g.Balanced)
		g.Profiles = slices.Clone(g.Profiles)
		for i := range g.Profiles {
			g.Profiles[i].Starts = slices.Clone(g.Profiles[i].Starts)
		}
		m.MIG = &g
	}
	return m
}

// ProfileMilli is a MIG profile's share of a GPU in milli-GPU, from the first catalog
// model that has the profile (a profile name fixes its slices, so any such model gives
// the same share); a profile no model has is valued as accounting values it.
func ProfileMilli(profile string) resources.MilliGPU {
	for i := range table() {
		m := &table()[i]
		if m.MIG == nil {
			continue
		}
		if p, ok := m.Profile(profile); ok {
			return p.Milli(m.MIG)
		}
	}
	return AccountingMilli(Request{MIG: []MIGCount{{Profile: profile, Count: 1}}}, Model{}, Sharing{})
}
