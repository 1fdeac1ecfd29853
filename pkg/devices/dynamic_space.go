package devices

import (
	"fmt"
	"math/bits"
	"reflect"
	"sync"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// migSpace is what a GPU with a dynamic MIG layout can become: every placement of every
// profile of its geometry (a profile at one of its start slots) and every valid layout,
// each a bit set over the placements. Layouts are closed under removal (any part of a
// valid layout is valid), so "a valid layout contains both the carved instances and
// placement p" is exactly "p can be carved now". Built once per geometry and shared,
// read-only, by every GPU of it.
type migSpace struct {
	geometry   *MIGGeometry
	placements []migPlacement
	layouts    []uint64 // every valid layout, the empty one included
	// byProfile are each profile's placements, as a bit set.
	byProfile []uint64
	// fresh are options(0, profile) per profile and freshRoom room(0): most dynamic
	// GPUs have nothing carved.
	fresh     [][]option
	freshRoom []int
}

// migPlacement is one profile at one start slot.
type migPlacement struct {
	inst    Instance // the catalog's spelling of the profile
	profile int      // position in MIGGeometry.Profiles
	slices  uint64   // the memory slices it occupies
	milli   resources.MilliGPU
	memory  resources.MiB
}

// maxPlacements is how many placements a bit set holds; every catalogued geometry has
// fewer than 30 (a test keeps it so).
const maxPlacements = 64

// catalogSpaces are the catalog's MIG models' spaces, built on first use and never
// written after (like the catalog table itself).
var catalogSpaces = sync.OnceValue(func() map[ModelID]*migSpace {
	out := map[ModelID]*migSpace{}
	for i := range table() {
		m := &table()[i]
		if m.MIG != nil {
			if s, err := newMIGSpace(m); err == nil {
				out[m.ID] = s
			}
		}
	}
	return out
})

// spaceFor is the space of model m's geometry: the catalog's when m is a catalog model
// with its geometry unchanged, else one built for m.
func spaceFor(m *Model) (*migSpace, error) {
	if m.MIG == nil {
		return nil, fmt.Errorf("GPU model %s does not support MIG", m.ID)
	}
	if s := catalogSpaces()[m.ID]; s != nil && (s.geometry == m.MIG || reflect.DeepEqual(*s.geometry, *m.MIG)) {
		return s, nil
	}
	return newMIGSpace(m)
}

// newMIGSpace lists m's placements and enumerates its valid layouts.
func newMIGSpace(m *Model) (*migSpace, error) {
	g := m.MIG
	s := &migSpace{geometry: g}
	for k, p := range g.Profiles {
		for _, start := range p.Starts {
			if !inGeometry(g, p, start) {
				continue // the layout rules reject it anyway
			}
			s.placements = append(s.placements, migPlacement{
				inst: Instance{Profile: p.Name, Start: start}, profile: k,
				slices: (uint64(1)<<p.MemorySlices - 1) << start, milli: p.Milli(g), memory: p.Memory,
			})
		}
	}
	if len(s.placements) > maxPlacements {
		return nil, fmt.Errorf("GPU model %s has %d MIG placements, more than the %d a dynamic layout handles", m.ID, len(s.placements), maxPlacements)
	}
	e := layoutEnum{space: s, model: m, counts: make([]int, len(g.Profiles))}
	e.walk(0, 0)
	s.byProfile = make([]uint64, len(g.Profiles))
	for i, pl := range s.placements {
		s.byProfile[pl.profile] |= 1 << i
	}
	s.fresh = make([][]option, len(g.Profiles))
	for k := range g.Profiles {
		s.fresh[k] = s.scoreOptions(0, k)
	}
	s.freshRoom = s.countRoom(0)
	return s, nil
}

// inGeometry reports whether p started at start stays inside g's memory slices.
func inGeometry(g *MIGGeometry, p Profile, start int) bool {
	return start >= 0 && start+p.MemorySlices <= g.MemorySlices
}

// layoutEnum walks every valid layout: each placement in turn is left out or, when the
// layout stays valid, taken. The rules are ValidateLayout's, checked incrementally (a
// test compares the two).
type layoutEnum struct {
	space *migSpace
	model *Model
	// The running layout: slices taken, compute, instances per profile, +me instances,
	// +me.all instances and instances that use media engines (all but -me ones).
	used                     uint64
	compute, media, allMedia int
	withMedia                int
	counts                   []int
}

func (e *layoutEnum) walk(i int, layout uint64) {
	if i == len(e.space.placements) {
		e.space.layouts = append(e.space.layouts, layout)
		return
	}
	e.walk(i+1, layout)
	pl := &e.space.placements[i]
	p := &e.model.MIG.Profiles[pl.profile]
	if !e.fits(pl, p) {
		return
	}
	e.apply(pl, p, 1)
	e.walk(i+1, layout|1<<i)
	e.apply(pl, p, -1)
}

// fits reports whether pl may join the running layout.
func (e *layoutEnum) fits(pl *migPlacement, p *Profile) bool {
	switch {
	case e.used&pl.slices != 0, e.compute+p.ComputeSlices > e.model.MIG.ComputeSlices, e.counts[pl.profile] >= p.MaxCount:
		return false
	case p.MediaExtensions && e.media > 0:
		return false
	}
	allMedia, withMedia := e.allMedia, e.withMedia
	if p.AllMedia {
		allMedia++
	}
	if !p.NoMedia {
		withMedia++
	}
	// A +me.all instance takes every media engine: beside it only -me instances.
	return allMedia == 0 || (allMedia == 1 && withMedia == 1)
}

// apply adds (d = 1) or removes (d = -1) pl from the running layout.
func (e *layoutEnum) apply(pl *migPlacement, p *Profile, d int) {
	e.used ^= pl.slices
	e.compute += d * p.ComputeSlices
	e.counts[pl.profile] += d
	if p.MediaExtensions {
		e.media += d
	}
	if p.AllMedia {
		e.allMedia += d
	}
	if !p.NoMedia {
		e.withMedia += d
	}
}

// index is the placement of in (profile in any spelling the model reads); false when
// the geometry has no such placement.
func (s *migSpace) index(m *Model, in Instance) (int, bool) {
	p, ok := m.Profile(in.Profile)
	if !ok {
		return 0, false
	}
	for i := range s.placements {
		if pl := &s.placements[i]; pl.inst.Start == in.Start && pl.inst.Profile == p.Name {
			return i, true
		}
	}
	return 0, false
}

// instances are the placements of layout, by placement order.
func (s *migSpace) instances(layout uint64) []Instance {
	out := make([]Instance, 0, bits.OnesCount64(layout))
	for i := range s.placements {
		if layout&(1<<i) != 0 {
			out = append(out, s.placements[i].inst)
		}
	}
	return out
}

// room is, per profile, how many more instances of it alone could be carved beside
// layout: what a dynamic GPU offers of each profile (the counts are alternatives, they
// do not add up). The caller must not change what it gets.
func (s *migSpace) room(layout uint64) []int {
	if layout == 0 && s.freshRoom != nil {
		return s.freshRoom
	}
	return s.countRoom(layout)
}

// countRoom is room computed: a pass over the valid layouts.
func (s *migSpace) countRoom(layout uint64) []int {
	out := make([]int, len(s.byProfile))
	for _, l := range s.layouts {
		if l&layout != layout {
			continue
		}
		for k, mask := range s.byProfile {
			out[k] = max(out[k], bits.OnesCount64(l&^layout&mask))
		}
	}
	return out
}
