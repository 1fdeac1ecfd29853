package devices

import (
	"cmp"
	"slices"
)

// Where a dynamic GPU carves an instance. Any placement of the profile that some valid
// layout holds together with the instances carved already can be carved; among them
// the one kept is the one that leaves the GPU the most room: the most valid layouts
// still reachable. A placement that rules out many layouts (a 3g.20gb at slot 0 on an
// A100, which leaves one 2g.10gb where slot 4 leaves two) scores low, so pods asking
// for 3g + 2g + 2g or 4g + 3g one after the other end up packed on one GPU. Ties go to
// the lowest start slot. No online rule can serve every order of requests (three 1g
// instances cannot know whether a 4g or a 3g comes next); this one keeps the choices
// that the most layouts need.

// option is a placement that can be carved now and its room.
type option struct {
	at   int // placement index
	room int // valid layouts that hold it and the carved instances
}

// options lists the placements of profile prof (index in the geometry) that can be
// carved beside layout, most room first, then by placement order (lowest start). The
// caller must not change what it gets.
func (s *migSpace) options(layout uint64, prof int) []option {
	if layout == 0 && s.fresh != nil {
		return s.fresh[prof]
	}
	return s.scoreOptions(layout, prof)
}

// scoreOptions is options computed: a pass over the valid layouts.
func (s *migSpace) scoreOptions(layout uint64, prof int) []option {
	var out []option
	for i := range s.placements {
		if s.placements[i].profile == prof && layout&(1<<i) == 0 {
			out = append(out, option{at: i})
		}
	}
	if len(out) == 0 {
		return nil
	}
	for _, l := range s.layouts {
		if l&layout != layout {
			continue
		}
		for k := range out {
			if l&(1<<out[k].at) != 0 {
				out[k].room++
			}
		}
	}
	out = slices.DeleteFunc(out, func(o option) bool { return o.room == 0 })
	slices.SortStableFunc(out, func(a, b option) int { return cmp.Compare(b.room, a.room) })
	return out
}

// profileWant is a count of instances of one profile (index in the geometry).
type profileWant struct {
	profile, count int
}

// plan carves, on top of layout, up to each want's count of instances: the largest
// profiles first (most memory slices, then compute), each instance at its best option.
// The placements come back in plan order; any part of them can be carved together,
// since the whole can.
func (s *migSpace) plan(layout uint64, wants []profileWant) []int {
	ps := s.geometry.Profiles
	order := slices.Clone(wants)
	slices.SortStableFunc(order, func(a, b profileWant) int {
		if c := cmp.Compare(ps[b.profile].MemorySlices, ps[a.profile].MemorySlices); c != 0 {
			return c
		}
		return cmp.Compare(ps[b.profile].ComputeSlices, ps[a.profile].ComputeSlices)
	})
	var out []int
	for _, w := range order {
		for range w.count {
			opts := s.options(layout, w.profile)
			if len(opts) == 0 {
				break
			}
			out = append(out, opts[0].at)
			layout |= 1 << opts[0].at
		}
	}
	return out
}
