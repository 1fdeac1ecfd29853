package devices_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

func TestLookupModel(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want devices.ModelID // want: the canonical model; "" means an error is expected
	}{
		{"GFD H100 SXM", "NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"},
		{"GFD A100 80GB", "NVIDIA-A100-SXM4-80GB", "A100-SXM4-80GB"},
		{"GFD A100 40GB", "NVIDIA-A100-SXM4-40GB", "A100-SXM4-40GB"},
		{"GFD T4", "Tesla-T4", "T4"},
		{"GFD L4", "NVIDIA-L4", "L4"},
		{"GFD A10G", "NVIDIA-A10G", "A10G"},
		{"GFD A10 is not A10G", "NVIDIA-A10", "A10"},
		{"GFD H200", "NVIDIA-H200", "H200-141GB"},
		{"GFD H100 NVL", "NVIDIA-H100-NVL", "H100-NVL-94GB"},
		{"GFD A30", "NVIDIA-A30", "A30-24GB"},
		{"GFD V100 16", "Tesla-V100-SXM2-16GB", "V100-SXM2-16GB"},
		{"GFD L40S", "NVIDIA-L40S", "L40S"},
		{"GFD shared suffix", "NVIDIA-A100-SXM4-40GB-SHARED", "A100-SXM4-40GB"},
		{"GFD MIG single suffix", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "A100-SXM4-40GB"},
		{"canonical", "H100-NVL-94GB", "H100-NVL-94GB"},
		{"short H100", "H100", "H100-SXM5-80GB"},
		{"short A100-80GB", "A100-80GB", "A100-SXM4-80GB"},
		{"case and spaces", "  h100 nvl ", "H100-NVL-94GB"},
		{"openb V100M32", "V100M32", "V100-SXM2-32GB"},
		{"openb G2", "G2", "G2"},
		{"openb P100", "P100", "P100-16GB"},
		{"unknown", "RTX-9090", ""},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := devices.LookupModel(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("LookupModel(%q) = %s, want error", tc.in, m.ID)
				}
				return
			}
			if err != nil || m.ID != tc.want {
				t.Fatalf("LookupModel(%q) = %q, %v; want %q", tc.in, m.ID, err, tc.want)
			}
		})
	}
}

func TestMIGModelsHaveTheirProfiles(t *testing.T) {
	want := map[devices.ModelID][]string{
		"A100-SXM4-40GB": {"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"},
		"A100-SXM4-80GB": {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		"H100-SXM5-80GB": {"1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"},
		"H100-NVL-94GB":  {"1g.12gb", "1g.12gb+me", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"},
		"H200-141GB":     {"1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"},
		"A30-24GB":       {"1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"},
	}
	for _, m := range devices.Models() {
		names, isMIG := want[m.ID]
		if isMIG != (m.MIG != nil) {
			t.Errorf("%s: MIG capable = %v, want %v", m.ID, m.MIG != nil, isMIG)
			continue
		}
		if isMIG && !slices.Equal(m.ProfileNames(), names) {
			t.Errorf("%s: profiles %v, want %v", m.ID, m.ProfileNames(), names)
		}
	}
}

// Every profile is self-consistent: its slots lie inside the GPU, its memory matches its
// name, and MaxCount copies pack on one GPU while one more does not.
func TestProfilesConsistent(t *testing.T) {
	for _, m := range devices.Models() {
		if m.MIG == nil {
			continue
		}
		for _, p := range m.MIG.Profiles {
			if p.Memory <= 0 || p.Memory > m.Memory {
				t.Errorf("%s %s: memory %d MiB out of range", m.ID, p.Name, p.Memory)
			}
			for _, s := range p.Starts {
				if s < 0 || s+p.MemorySlices > m.MIG.MemorySlices {
					t.Errorf("%s %s: start %d + %d slices outside %d", m.ID, p.Name, s, p.MemorySlices, m.MIG.MemorySlices)
				}
			}
			copies := slices.Repeat([]string{p.Name}, p.MaxCount)
			if _, err := m.PackProfiles(copies); err != nil {
				t.Errorf("%s: %d x %s should pack: %v", m.ID, p.MaxCount, p.Name, err)
			}
			if _, err := m.PackProfiles(append(copies, p.Name)); err == nil {
				t.Errorf("%s: %d x %s should not pack", m.ID, p.MaxCount+1, p.Name)
			}
		}
		if _, err := m.PackProfiles(m.MIG.Balanced); err != nil {
			t.Errorf("%s: all-balanced %v should pack: %v", m.ID, m.MIG.Balanced, err)
		}
	}
}

// Spot checks of the placement tables against NVIDIA's MIG user guide.
func TestProfilePlacementSpotChecks(t *testing.T) {
	tests := []struct {
		model, profile string
		// want: the allowed start slots, the memory slices taken and the compute slices
		starts            []int
		memSlices, slices int
	}{
		{"A100-SXM4-40GB", "7g.40gb", []int{0}, 8, 7},
		{"A100-SXM4-40GB", "4g.20gb", []int{0}, 4, 4},
		{"A100-SXM4-40GB", "3g.20gb", []int{0, 4}, 4, 3},
		{"A100-SXM4-40GB", "2g.10gb", []int{0, 2, 4}, 2, 2},
		{"A100-SXM4-40GB", "1g.10gb", []int{0, 2, 4, 6}, 2, 1},
		{"A100-SXM4-40GB", "1g.5gb", []int{0, 1, 2, 3, 4, 5, 6}, 1, 1},
		{"A100-SXM4-40GB", "1g.5gb+me", []int{0, 1, 2, 3, 4, 5, 6}, 1, 1},
		{"H100-SXM5-80GB", "1g.20gb", []int{0, 2, 4, 6}, 2, 1},
		{"H100-SXM5-80GB", "3g.40gb", []int{0, 4}, 4, 3},
		{"H100-NVL-94GB", "2g.24gb", []int{0, 2, 4}, 2, 2},
		{"H200-141GB", "1g.35gb", []int{0, 2, 4, 6}, 2, 1},
		{"H200-141GB", "7g.141gb", []int{0}, 8, 7},
		{"A30-24GB", "1g.6gb", []int{0, 1, 2, 3}, 1, 1},
		{"A30-24GB", "2g.12gb", []int{0, 2}, 2, 2},
		{"A30-24GB", "2g.12gb+me", []int{0, 2}, 2, 2},
		{"A30-24GB", "4g.24gb", []int{0}, 4, 4},
	}
	for _, tc := range tests {
		t.Run(tc.model+"/"+tc.profile, func(t *testing.T) {
			p, ok := mustModel(t, tc.model).Profile(tc.profile)
			if !ok {
				t.Fatalf("no profile %s", tc.profile)
			}
			if !slices.Equal(p.Starts, tc.starts) || p.MemorySlices != tc.memSlices || p.ComputeSlices != tc.slices {
				t.Errorf("got starts %v, %d memory, %d compute slices; want %v, %d, %d",
					p.Starts, p.MemorySlices, p.ComputeSlices, tc.starts, tc.memSlices, tc.slices)
			}
		})
	}
}

func TestProfileMilli(t *testing.T) {
	m := mustModel(t, "A100")
	for name, want := range map[string]int64{"7g.40gb": 1000, "4g.20gb": 571, "3g.20gb": 428, "2g.10gb": 285, "1g.5gb": 142} {
		p, _ := m.Profile(name)
		if got := p.Milli(m.MIG); int64(got) != want {
			t.Errorf("%s milli = %d, want %d", name, got, want)
		}
	}
	a30 := mustModel(t, "A30")
	if p, _ := a30.Profile("2g.12gb"); p.Milli(a30.MIG) != 500 {
		t.Errorf("A30 2g.12gb milli = %d, want 500", p.Milli(a30.MIG))
	}
}

func TestLookupErrorListsModels(t *testing.T) {
	_, err := devices.LookupModel("B300")
	if err == nil || !strings.Contains(err.Error(), "H100-SXM5-80GB") {
		t.Fatalf("error %v should list known models", err)
	}
}
