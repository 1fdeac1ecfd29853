package devices_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
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
		{"GFD B200", "NVIDIA-B200", "B200-180GB"},
		{"GFD GB200", "NVIDIA-GB200", "GB200-186GB"},
		{"GFD B300", "NVIDIA-B300-SXM6-AC", "B300-288GB"},
		{"GFD GB300", "NVIDIA-GB300", "GB300-288GB"},
		{"GFD GH200 480GB", "NVIDIA-GH200-480GB", "GH200-96GB"},
		{"GFD GH200 144G", "NVIDIA-GH200-144G-HBM3e", "GH200-144GB"},
		{"GFD H20", "NVIDIA-H20", "H20-96GB"},
		{"GFD H800", "NVIDIA-H800", "H800-80GB"},
		{"GFD H800 NVL", "NVIDIA-H800-NVL", "H800-NVL-94GB"},
		{"GFD H100 PCIe", "NVIDIA-H100-PCIe", "H100-SXM5-80GB"},
		{"GFD H200 NVL", "NVIDIA-H200-NVL", "H200-141GB"},
		{"GFD A800 40GB", "NVIDIA-A800-SXM4-40GB", "A800-SXM4-40GB"},
		{"GFD A800 80GB PCIe", "NVIDIA-A800-80GB-PCIe", "A800-SXM4-80GB"},
		{"GFD A100 80GB PCIe", "NVIDIA-A100-80GB-PCIe", "A100-SXM4-80GB"},
		{"GFD RTX PRO 6000", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "RTX-PRO-6000-Blackwell"},
		{"GFD B200 MIG single", "NVIDIA-B200-MIG-1g.23gb.me", "B200-180GB"},
		{"generic ID", "generic-98304Mi-NVIDIA-X9", "generic-98304Mi-NVIDIA-X9"},
		{"unknown", "RTX-9090", ""},
		{"generic without memory", "generic-Mi", ""},
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
	eight := func(g1, g1x2, g2, g3, g4, g7 string) []string {
		return []string{"1g." + g1, "1g." + g1 + "+me", "1g." + g1x2, "2g." + g2, "3g." + g3, "4g." + g4, "7g." + g7}
	}
	a100, h100 := eight("5gb", "10gb", "10gb", "20gb", "20gb", "40gb"), eight("10gb", "20gb", "20gb", "40gb", "40gb", "80gb")
	nvl, hopper96 := eight("12gb", "24gb", "24gb", "47gb", "47gb", "94gb"), eight("12gb", "24gb", "24gb", "48gb", "48gb", "96gb")
	want := map[devices.ModelID][]string{
		"A100-SXM4-40GB": a100, "A800-SXM4-40GB": a100,
		"A100-SXM4-80GB": h100, "A800-SXM4-80GB": h100, "H100-SXM5-80GB": h100, "H800-80GB": h100,
		"H100-NVL-94GB": nvl, "H800-NVL-94GB": nvl, "H20-96GB": hopper96, "GH200-96GB": hopper96,
		"H200-141GB":  eight("18gb", "35gb", "35gb", "71gb", "71gb", "141gb"),
		"GH200-144GB": eight("18gb", "36gb", "36gb", "72gb", "72gb", "144gb"),
		"B200-180GB":  eight("23gb", "45gb", "45gb", "90gb", "90gb", "180gb"),
		"GB200-186GB": eight("23gb", "47gb", "47gb", "93gb", "93gb", "186gb"),
		"B300-288GB":  eight("34gb", "67gb", "67gb", "135gb", "135gb", "269gb"),
		"GB300-288GB": eight("35gb", "70gb", "70gb", "139gb", "139gb", "278gb"),
		"A30-24GB":    {"1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"},
		"RTX-PRO-6000-Blackwell": {"1g.24gb", "1g.24gb+gfx", "1g.24gb-me", "1g.24gb+me.all",
			"2g.48gb", "2g.48gb+gfx", "2g.48gb-me", "2g.48gb+me.all", "4g.96gb", "4g.96gb+gfx"},
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

// MIG memory is NVML's figure, not the name's, where NVML's is known.
func TestProfileMemoryIsNVMLs(t *testing.T) {
	tests := []struct {
		model, profile string
		want           resources.MiB
	}{
		{"A100-SXM4-40GB", "1g.5gb", 4864},
		{"A100-SXM4-40GB", "1g.5gb+me", 4864},
		{"A100-SXM4-40GB", "3g.20gb", 19968},
		{"A100-SXM4-40GB", "7g.40gb", 40192},
		{"A800-SXM4-40GB", "1g.5gb", 4864},
		{"A100-SXM4-80GB", "1g.10gb", 9856},
		{"A30-24GB", "2g.12gb", 11672},
		{"H100-SXM5-80GB", "1g.10gb", 9984},
		{"H100-SXM5-80GB", "7g.80gb", 81152},
		{"B200-180GB", "1g.23gb", 23552},
		{"GB200-186GB", "3g.93gb", 95232}, // nominal: NVML's figure unknown
	}
	for _, tc := range tests {
		p, ok := mustModel(t, tc.model).Profile(tc.profile)
		if !ok || p.MemoryMiB != tc.want || p.Memory != p.MemoryMiB {
			t.Errorf("%s %s: MemoryMiB %d (Memory %d), want %d", tc.model, tc.profile, p.MemoryMiB, p.Memory, tc.want)
		}
	}
	if mustModel(t, "A100").MIG.MemoryNominal || !mustModel(t, "GB200").MIG.MemoryNominal {
		t.Error("A100 memory is NVML's, GB200's nominal")
	}
}

func TestGFDFamily(t *testing.T) {
	for name, want := range map[string]string{"A100": "ampere", "L4": "ada-lovelace", "L40S": "ada-lovelace", "H100": "hopper",
		"H20": "hopper", "B200": "blackwell", "GB300": "blackwell", "RTX-PRO-6000": "blackwell", "T4": "turing",
		"V100": "volta", "P100": "pascal", "G2": "undefined"} {
		if got := mustModel(t, name).GFDFamily(); got != want {
			t.Errorf("%s: family %q, want %q", name, got, want)
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
			if p.MemoryMiB <= 0 || p.MemoryMiB > m.Memory {
				t.Errorf("%s %s: memory %d MiB out of range", m.ID, p.Name, p.MemoryMiB)
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
		{"B200-180GB", "1g.45gb", []int{0, 2, 4, 6}, 2, 1},
		{"B200-180GB", "3g.90gb", []int{0, 4}, 4, 3},
		{"GB300-288GB", "1g.35gb+me", []int{0, 1, 2, 3, 4, 5, 6}, 1, 1},
		{"H20-96GB", "2g.24gb", []int{0, 2, 4}, 2, 2},
		{"RTX-PRO-6000-Blackwell", "1g.24gb+gfx", []int{0, 1, 2, 3}, 1, 1},
		{"RTX-PRO-6000-Blackwell", "2g.48gb-me", []int{0, 2}, 2, 2},
		{"RTX-PRO-6000-Blackwell", "4g.96gb", []int{0}, 4, 4},
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
	_, err := devices.LookupModel("X9000")
	if err == nil || !strings.Contains(err.Error(), "H100-SXM5-80GB") {
		t.Fatalf("error %v should list known models", err)
	}
}

// Every MIG model carries its boards' PCI IDs (mig-parted's device filters select by
// them), NVIDIA's vendor ID in the low half, and no ID names two models.
func TestMIGModelsHavePCIIDs(t *testing.T) {
	seen := map[uint32]devices.ModelID{}
	for _, m := range devices.Models() {
		if m.MIG == nil {
			continue
		}
		if len(m.PCIDeviceIDs) == 0 {
			t.Errorf("%s: no PCI device IDs", m.ID)
		}
		for _, id := range m.PCIDeviceIDs {
			if id&0xFFFF != 0x10DE {
				t.Errorf("%s: PCI ID %#08x is not NVIDIA's (0x10DE)", m.ID, id)
			}
			if other, dup := seen[id]; dup {
				t.Errorf("PCI ID %#08x names %s and %s", id, other, m.ID)
			}
			seen[id] = m.ID
		}
	}
}

// A looked-up model is the caller's own: changing it changes no later lookup.
func TestLookupModelReturnsACopy(t *testing.T) {
	m, err := devices.LookupModel("A100-SXM4-40GB")
	if err != nil {
		t.Fatal(err)
	}
	m.Products[0] = "changed"
	m.MIG.Profiles[0].Starts[0] = 99
	m.MIG.Balanced[0] = "changed"
	again, err := devices.LookupModel("A100-SXM4-40GB")
	if err != nil {
		t.Fatal(err)
	}
	if again.Products[0] == "changed" || again.MIG.Profiles[0].Starts[0] == 99 || again.MIG.Balanced[0] == "changed" {
		t.Fatal("a change to one lookup's model reached the next lookup")
	}
}
