package devices

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// ModelID is the canonical name of a GPU model, e.g. "H100-SXM5-80GB".
type ModelID string

// Model is one GPU model of the catalog.
type Model struct {
	ID ModelID
	// Family is the architecture ("Ampere", "Hopper", ...).
	Family string
	// ComputeMajor and ComputeMinor are the CUDA compute capability (9.0 on Hopper); 0.0
	// when unknown. GPU Feature Discovery derives its gpu.family label from them.
	ComputeMajor, ComputeMinor int
	// Memory is the nominal memory of one GPU (the marketing GB times 1024; nvidia-smi
	// reports a little less, which no accounting here depends on).
	Memory resources.MiB
	// MIG is the MIG geometry; nil for models without MIG.
	MIG *MIGGeometry
	// Products are the nvidia.com/gpu.product values GPU Feature Discovery writes for it;
	// Aliases are further names users write (short names, trace codes).
	Products []string
	Aliases  []string
	// PCIDeviceIDs are the boards' PCI IDs as NVML reports them (device<<16 | 0x10DE), for
	// mig-parted's device filters.
	PCIDeviceIDs []uint32
}

// MIGGeometry is how a MIG-capable model is sliced.
type MIGGeometry struct {
	// MemorySlices (8 on A100/H100/H200, 4 on A30) are the placement slots; ComputeSlices
	// (7 or 4) bound the sum of the instances' compute.
	MemorySlices  int
	ComputeSlices int
	// Profiles, smallest first.
	Profiles []Profile
	// Balanced is mig-parted's "all-balanced" layout for the model.
	Balanced []string
	// MemoryNominal is true where the profiles' MemoryMiB is the size their names state
	// (1g.23gb = 23552 MiB) because NVML's own figure for the model was not available.
	MemoryNominal bool
}

// Profile is one MIG GPU-instance profile and its placement rule.
type Profile struct {
	// Name is NVIDIA's spelling ("1g.10gb+me"); resources.MIGResource gives the Kubernetes one.
	Name          string
	ComputeSlices int
	MemorySlices  int
	// MemoryMiB is the instance's memory as NVML reports it (A100-40GB 1g.5gb: 4864 MiB,
	// less than the name says). Memory holds the same figure for older callers.
	MemoryMiB resources.MiB
	Memory    resources.MiB
	// Starts are the memory slices an instance may start at; it then occupies
	// MemorySlices consecutive slices.
	Starts []int
	// MaxCount is how many instances of this profile fit on one GPU.
	MaxCount int
	// MediaExtensions (+me) profiles own the GPU's media engines: one per GPU.
	MediaExtensions bool
	// AllMedia (+me.all) takes every media engine, so the other instances on the GPU
	// must be NoMedia (-me) ones; Graphics (+gfx) instances also run graphics work.
	AllMedia, NoMedia, Graphics bool
}

// Milli is the profile's share of the GPU in the common accounting unit: its compute
// slices over the model's, rounded down (7g = 1000, 3g = 428, 1g = 142 on 7-slice GPUs).
func (p Profile) Milli(g *MIGGeometry) resources.MilliGPU {
	if g == nil || g.ComputeSlices == 0 {
		return 0
	}
	return resources.MilliGPU(p.ComputeSlices) * resources.MilliPerGPU / resources.MilliGPU(g.ComputeSlices)
}

// occupies reports whether an instance of p started at start covers memory slice s.
func (p Profile) occupies(start, s int) bool { return s >= start && s < start+p.MemorySlices }

// allowsStart reports whether start is one of p's placement slots.
func (p Profile) allowsStart(start int) bool {
	for _, s := range p.Starts {
		if s == start {
			return true
		}
	}
	return false
}

// Profile returns the MIG profile of m with the given name (case-insensitive), in
// NVIDIA's spelling or the Kubernetes one ("1g.10gb+me" or "1g.10gb.me").
func (m Model) Profile(name string) (Profile, bool) {
	if m.MIG == nil {
		return Profile{}, false
	}
	name = resources.CanonicalMIGProfile(name)
	for _, p := range m.MIG.Profiles {
		if strings.EqualFold(p.Name, name) {
			return p, true
		}
	}
	return Profile{}, false
}

// ProfileNames lists m's MIG profile names, smallest first.
func (m Model) ProfileNames() []string {
	if m.MIG == nil {
		return nil
	}
	out := make([]string, len(m.MIG.Profiles))
	for i, p := range m.MIG.Profiles {
		out[i] = p.Name
	}
	return out
}

// Models returns the whole catalog, sorted by ID. Each call builds fresh values, so
// callers may keep or change what they get.
func Models() []Model {
	ms := catalog()
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	return ms
}

// MIGModels are the catalog's MIG-capable models, sorted by ID.
func MIGModels() []Model {
	var out []Model
	for _, m := range Models() {
		if m.MIG != nil {
			out = append(out, m)
		}
	}
	return out
}

// LookupModel finds a model by canonical ID, GPU Feature Discovery product label
// (with GFD's "-SHARED" and "-MIG-<profile>" suffixes stripped) or short name, ignoring
// case, spaces and underscores. A generic model's ID (GenericModel) reads back into the
// same generic model.
func LookupModel(name string) (Model, error) {
	if m, ok, err := lookupGeneric(name); ok {
		return m, err
	}
	i, err := modelIndex(name)
	if err != nil {
		return Model{}, err
	}
	return table()[i].clone(), nil
}

// modelIndex is the position in the catalog table of the model name names.
func modelIndex(name string) (int, error) {
	key := normalizeModelName(name)
	if key == "" {
		return 0, fmt.Errorf("GPU model name is empty")
	}
	for i, m := range table() {
		if sameModelName(string(m.ID), key) || slices.ContainsFunc(m.Products, func(n string) bool { return sameModelName(n, key) }) ||
			slices.ContainsFunc(m.Aliases, func(n string) bool { return sameModelName(n, key) }) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown GPU model %q: known models are %s", name, strings.Join(modelIDs(), ", "))
}

func modelIDs() []string {
	var ids []string
	for _, m := range Models() {
		ids = append(ids, string(m.ID))
	}
	return ids
}

// normalizeModelName upper-cases, turns spaces and underscores into dashes and drops
// the suffixes GFD appends under time-slicing ("-SHARED") and MIG single ("-MIG-1G.10GB").
func normalizeModelName(s string) string {
	s = strings.Map(normalizeModelRune, strings.TrimSpace(s))
	if i := strings.Index(s, "-MIG-"); i > 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(s, "-SHARED")
}

func normalizeModelRune(r rune) rune {
	if r == ' ' || r == '_' {
		return '-'
	}
	return unicode.ToUpper(r)
}

// sameModelName reports whether catalog name n (which carries no GFD suffix) normalizes
// to key, without allocating: LookupModel compares key with every name of the catalog.
func sameModelName(n, key string) bool {
	n = strings.TrimSpace(n)
	for i := 0; i < len(n); i++ {
		if n[i] >= 0x80 { // normalizing ASCII keeps the length; anything else the slow way
			return normalizeModelName(n) == key
		}
	}
	if len(n) != len(key) {
		return false
	}
	for i := 0; i < len(n); i++ {
		if rune(key[i]) != normalizeModelRune(rune(n[i])) {
			return false
		}
	}
	return true
}

// names lists every name m is known by.
func (m Model) names() []string {
	out := []string{string(m.ID)}
	out = append(out, m.Products...)
	return append(out, m.Aliases...)
}
