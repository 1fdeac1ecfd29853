package devices

import (
	"fmt"
	"sort"
	"strings"
)

// Instance is one MIG GPU instance: a profile placed at a start memory slice.
type Instance struct {
	Profile string
	Start   int
}

func (i Instance) String() string { return fmt.Sprintf("%s@%d", i.Profile, i.Start) }

// Named layouts, in the style of NVIDIA mig-parted's config (plus "all-<profile>").
const (
	LayoutDisabled = "all-disabled"
	LayoutBalanced = "all-balanced"
	LayoutCustom   = "custom"
	layoutAllPre   = "all-"
)

// ValidateLayout reports whether the hardware would accept the instances on one GPU of
// model m: every profile exists, every instance starts at one of its profile's slots,
// no two instances share a memory slice, the compute slices add up to at most the
// model's (implied by the slot rules on every catalogued model; kept as a guard), no
// profile exceeds its per-GPU count, at most one +me instance exists and a +me.all
// instance shares the GPU only with -me ones.
func (m Model) ValidateLayout(l []Instance) error {
	if m.MIG == nil {
		if len(l) == 0 {
			return nil
		}
		return fmt.Errorf("GPU model %s does not support MIG, but the layout has %d instances", m.ID, len(l))
	}
	g := m.MIG
	owner := make([]int, g.MemorySlices) // index+1 of the instance holding each slice
	compute, media := 0, 0
	counts := map[string]int{}
	for i, in := range l {
		p, ok := m.Profile(in.Profile)
		if !ok {
			return fmt.Errorf("instance %d: %s has no MIG profile %q (profiles: %s)", i, m.ID, in.Profile, strings.Join(m.ProfileNames(), ", "))
		}
		if !p.allowsStart(in.Start) {
			return fmt.Errorf("instance %d: MIG profile %s on %s cannot start at memory slice %d (allowed starts: %v)", i, p.Name, m.ID, in.Start, p.Starts)
		}
		for s := in.Start; s < in.Start+p.MemorySlices; s++ {
			if owner[s] != 0 {
				return fmt.Errorf("instance %d: %s overlaps instance %d (%s) at memory slice %d", i, in, owner[s]-1, l[owner[s]-1], s)
			}
			owner[s] = i + 1
		}
		compute += p.ComputeSlices
		counts[p.Name]++
		if counts[p.Name] > p.MaxCount {
			return fmt.Errorf("instance %d: more than %d instances of MIG profile %s on one %s", i, p.MaxCount, p.Name, m.ID)
		}
		if p.MediaExtensions {
			media++
		}
	}
	if compute > g.ComputeSlices {
		return fmt.Errorf("layout %v uses %d compute slices, %s has %d", l, compute, m.ID, g.ComputeSlices)
	}
	if media > 1 {
		return fmt.Errorf("layout %v has %d media-extension (+me) instances, at most one per GPU", l, media)
	}
	return m.checkAllMedia(l)
}

// checkAllMedia enforces +me.all: such an instance takes every media engine of the GPU,
// so every other instance must be a -me (no media) one.
func (m Model) checkAllMedia(l []Instance) error {
	all := -1
	for i, in := range l {
		if p, _ := m.Profile(in.Profile); p.AllMedia {
			all = i
		}
	}
	if all < 0 {
		return nil
	}
	for i, in := range l {
		if p, _ := m.Profile(in.Profile); i != all && !p.NoMedia {
			return fmt.Errorf("instance %d: %s takes every media engine (+me.all), so %s must be a -me profile", i, l[all], in)
		}
	}
	return nil
}

// PackProfiles places the given profiles on one GPU: it searches, deterministically
// (largest profile first, lowest start first), for start slots that make a valid layout,
// and returns the instances sorted by start. No valid packing is an error naming the
// profiles.
func (m Model) PackProfiles(profiles []string) ([]Instance, error) {
	if len(profiles) == 0 {
		return nil, nil
	}
	if m.MIG == nil {
		return nil, fmt.Errorf("GPU model %s does not support MIG (asked for %s)", m.ID, strings.Join(profiles, ", "))
	}
	ps := make([]Profile, len(profiles))
	for i, name := range profiles {
		p, ok := m.Profile(name)
		if !ok {
			return nil, fmt.Errorf("%s has no MIG profile %q (profiles: %s)", m.ID, name, strings.Join(m.ProfileNames(), ", "))
		}
		ps[i] = p
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].MemorySlices != ps[j].MemorySlices {
			return ps[i].MemorySlices > ps[j].MemorySlices
		}
		if ps[i].ComputeSlices != ps[j].ComputeSlices {
			return ps[i].ComputeSlices > ps[j].ComputeSlices
		}
		return ps[i].Name < ps[j].Name
	})
	out := make([]Instance, 0, len(ps))
	used := make([]bool, m.MIG.MemorySlices)
	if !m.pack(ps, used, &out) {
		return nil, fmt.Errorf("MIG profiles [%s] have no valid placement on one %s", strings.Join(profiles, ", "), m.ID)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out, nil
}

// pack places ps[0] at each allowed free start in turn and recurses; the layout is
// checked in full (compute, counts, +me) once every profile has a slot.
func (m Model) pack(ps []Profile, used []bool, out *[]Instance) bool {
	if len(ps) == 0 {
		return m.ValidateLayout(*out) == nil
	}
	p := ps[0]
	for _, start := range p.Starts {
		if !sliceRangeFree(used, start, p.MemorySlices) {
			continue
		}
		setSliceRange(used, start, p.MemorySlices, true)
		*out = append(*out, Instance{Profile: p.Name, Start: start})
		if m.pack(ps[1:], used, out) {
			return true
		}
		*out = (*out)[:len(*out)-1]
		setSliceRange(used, start, p.MemorySlices, false)
	}
	return false
}

func sliceRangeFree(used []bool, start, n int) bool {
	if start+n > len(used) {
		return false
	}
	for s := start; s < start+n; s++ {
		if used[s] {
			return false
		}
	}
	return true
}

func setSliceRange(used []bool, start, n int, v bool) {
	for s := start; s < start+n; s++ {
		used[s] = v
	}
}

// LayoutProfiles returns the profile list a named layout puts on GPU number gpu (0-based)
// of a node with gpus GPUs; nil means MIG disabled on that GPU, or under LayoutDynamic
// no instance until claims are allocated.
func (m Model) LayoutProfiles(s Sharing, gpu, gpus int) ([]string, error) {
	layout := strings.ToLower(strings.TrimSpace(s.Layout))
	switch {
	case layout == LayoutDisabled || layout == "":
		return nil, nil
	case layout == LayoutDynamic && m.MIG != nil:
		return nil, nil // carved as claims are allocated (dynamic.go)
	case layout == LayoutCustom:
		switch len(s.CustomProfiles) {
		case 0:
			return nil, fmt.Errorf("layout custom: customProfiles is empty")
		case 1:
			return s.CustomProfiles[0], nil
		case gpus:
			return s.CustomProfiles[gpu], nil
		default:
			return nil, fmt.Errorf("layout custom: customProfiles has %d entries, want 1 (for every GPU) or %d (one per GPU)", len(s.CustomProfiles), gpus)
		}
	case m.MIG == nil:
		return nil, fmt.Errorf("layout %q: GPU model %s does not support MIG", s.Layout, m.ID)
	case layout == LayoutBalanced:
		return m.MIG.Balanced, nil
	case strings.HasPrefix(layout, layoutAllPre):
		// mig-parted names layouts in the Kubernetes spelling ("all-1g.10gb.me",
		// "all-1g.24gb.me.all"); Profile reads both.
		name := strings.TrimPrefix(layout, layoutAllPre)
		p, ok := m.Profile(name)
		if !ok {
			return nil, fmt.Errorf("layout %q: %s has no MIG profile %q (profiles: %s)", s.Layout, m.ID, name, strings.Join(m.ProfileNames(), ", "))
		}
		out := make([]string, p.MaxCount)
		for i := range out {
			out[i] = p.Name
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown MIG layout %q: want all-disabled, all-balanced, all-<profile>, custom or %s", s.Layout, LayoutDynamic)
}

// ResolveLayout turns a MIG sharing config into concrete instances for each of gpus
// GPUs. Non-MIG modes and "all-disabled" give GPUs without instances.
func (m Model) ResolveLayout(s Sharing, gpus int) ([][]Instance, error) {
	if gpus < 0 {
		return nil, fmt.Errorf("GPU count %d is negative", gpus)
	}
	out := make([][]Instance, gpus)
	if s.Mode != MIG {
		return out, nil
	}
	for i := range out {
		profiles, err := m.LayoutProfiles(s, i, gpus)
		if err != nil {
			return nil, err
		}
		if out[i], err = m.PackProfiles(profiles); err != nil {
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
	}
	return out, nil
}
