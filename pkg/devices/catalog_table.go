package devices

import (
	"slices"
	"sync"
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
