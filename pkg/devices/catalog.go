package devices

import (
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// The MIG tables below follow NVIDIA's MIG User Guide, section "Supported MIG Profiles"
// (subsections "A30 MIG Profiles", "A100 MIG Profiles", "H100 MIG Profiles", "H200 MIG
// Profiles"), with the start slots that NVML's GPU-instance possible placements report
// (nvidia-smi mig -lgipp): on 8-slice GPUs 1g starts at 0..6, the two-slice 1g and 2g at
// even slots (1g: 0,2,4,6; 2g: 0,2,4), 3g at 0 or 4, 4g and 7g at 0 only; on the A30,
// 1g at 0..3, 2g at 0 or 2, 4g at 0. The balanced layouts are mig-parted's
// config-default.yaml "all-balanced" entries.

// catalog builds the model table. It is a function, not a package variable, so no caller
// can change what another sees.
func catalog() []Model {
	return []Model{
		migModel("A100-SXM4-40GB", "Ampere", 40, eightSlice("5gb", "10gb", "10gb", "20gb", "20gb", "40gb"),
			[]string{"1g.5gb", "1g.5gb", "2g.10gb", "3g.20gb"},
			// The PCIe board has the same die, memory and MIG geometry.
			[]string{"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB", "A100-PCIE-40GB"},
			[]string{"A100", "A100-40GB", "A100-SXM4"}),
		migModel("A100-SXM4-80GB", "Ampere", 80, eightSlice("10gb", "20gb", "20gb", "40gb", "40gb", "80gb"),
			[]string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"},
			[]string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIE"},
			[]string{"A100-80GB"}),
		migModel("H100-SXM5-80GB", "Hopper", 80, eightSlice("10gb", "20gb", "20gb", "40gb", "40gb", "80gb"),
			[]string{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"},
			[]string{"NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-SXM5-80GB", "NVIDIA-H100-PCIE"},
			[]string{"H100", "H100-80GB", "H100-SXM5"}),
		migModel("H100-NVL-94GB", "Hopper", 94, eightSlice("12gb", "24gb", "24gb", "47gb", "47gb", "94gb"),
			[]string{"1g.12gb", "1g.12gb", "2g.24gb", "3g.47gb"},
			[]string{"NVIDIA-H100-NVL"},
			[]string{"H100-NVL", "H100-94GB"}),
		migModel("H200-141GB", "Hopper", 141, eightSlice("18gb", "35gb", "35gb", "71gb", "71gb", "141gb"),
			[]string{"1g.18gb", "1g.18gb", "2g.35gb", "3g.71gb"},
			[]string{"NVIDIA-H200", "NVIDIA-H200-141GB-HBM3E", "NVIDIA-H200-NVL"},
			[]string{"H200", "H200-SXM5"}),
		migModel("A30-24GB", "Ampere", 24, a30Profiles(),
			[]string{"1g.6gb", "1g.6gb", "2g.12gb"},
			[]string{"NVIDIA-A30"},
			[]string{"A30"}),
		plainModel("V100-SXM2-16GB", "Volta", 16, []string{"Tesla-V100-SXM2-16GB", "Tesla-V100-PCIE-16GB"}, []string{"V100", "V100-16GB", "V100M16"}),
		plainModel("V100-SXM2-32GB", "Volta", 32, []string{"Tesla-V100-SXM2-32GB", "Tesla-V100-PCIE-32GB"}, []string{"V100-32GB", "V100M32"}),
		plainModel("P100-16GB", "Pascal", 16, []string{"Tesla-P100-PCIE-16GB", "Tesla-P100-SXM2-16GB"}, []string{"P100"}),
		plainModel("T4", "Turing", 16, []string{"Tesla-T4", "NVIDIA-T4"}, nil),
		plainModel("L4", "Ada", 24, []string{"NVIDIA-L4"}, nil),
		plainModel("A10", "Ampere", 24, []string{"NVIDIA-A10"}, nil),
		plainModel("A10G", "Ampere", 24, []string{"NVIDIA-A10G"}, nil),
		plainModel("L40S", "Ada", 48, []string{"NVIDIA-L40S"}, nil),
		// G2 and G3 are the openb trace's anonymised GPU types; their memory is not
		// published, so 16 GiB is assumed (only memory-fraction requests depend on it).
		plainModel("G2", "Unknown", 16, nil, []string{"openb-G2"}),
		plainModel("G3", "Unknown", 16, nil, []string{"openb-G3"}),
	}
}

func gib(n int64) resources.MiB { return resources.MiB(n * 1024) }

func plainModel(id ModelID, family string, memGB int64, products, aliases []string) Model {
	return Model{ID: id, Family: family, Memory: gib(memGB), Products: products, Aliases: aliases}
}

func migModel(id ModelID, family string, memGB int64, g *MIGGeometry, balanced, products, aliases []string) Model {
	g.Balanced = balanced
	return Model{ID: id, Family: family, Memory: gib(memGB), MIG: g, Products: products, Aliases: aliases}
}

// eightSlice is the geometry shared by A100, H100 and H200 (8 memory, 7 compute slices);
// only the memory in the profile names differs. Arguments: the memory suffixes of
// 1g (one slice), 1g (two slices), 2g, 3g, 4g and 7g.
func eightSlice(g1, g1x2, g2, g3, g4, g7 string) *MIGGeometry {
	return &MIGGeometry{
		MemorySlices:  8,
		ComputeSlices: 7,
		Profiles: []Profile{
			profile("1g."+g1, 1, 1, 7, false, 0, 1, 2, 3, 4, 5, 6),
			profile("1g."+g1+"+me", 1, 1, 1, true, 0, 1, 2, 3, 4, 5, 6),
			profile("1g."+g1x2, 1, 2, 4, false, 0, 2, 4, 6),
			profile("2g."+g2, 2, 2, 3, false, 0, 2, 4),
			profile("3g."+g3, 3, 4, 2, false, 0, 4),
			profile("4g."+g4, 4, 4, 1, false, 0),
			profile("7g."+g7, 7, 8, 1, false, 0),
		},
	}
}

// a30Profiles is the A30-24GB geometry: 4 memory and 4 compute slices.
func a30Profiles() *MIGGeometry {
	return &MIGGeometry{
		MemorySlices:  4,
		ComputeSlices: 4,
		Profiles: []Profile{
			profile("1g.6gb", 1, 1, 4, false, 0, 1, 2, 3),
			profile("1g.6gb+me", 1, 1, 1, true, 0, 1, 2, 3),
			profile("2g.12gb", 2, 2, 2, false, 0, 2),
			profile("2g.12gb+me", 2, 2, 1, true, 0, 2),
			profile("4g.24gb", 4, 4, 1, false, 0),
		},
	}
}

func profile(name string, compute, memSlices, max int, me bool, starts ...int) Profile {
	return Profile{
		Name:            name,
		ComputeSlices:   compute,
		MemorySlices:    memSlices,
		Memory:          profileMemory(name),
		Starts:          starts,
		MaxCount:        max,
		MediaExtensions: me,
	}
}

// profileMemory reads the memory from a profile name ("3g.40gb" -> 40 GiB).
func profileMemory(name string) resources.MiB {
	_, rest, _ := strings.Cut(name, ".")
	rest, _, _ = strings.Cut(rest, "+")
	n, err := strconv.ParseInt(strings.TrimSuffix(rest, "gb"), 10, 64)
	if err != nil {
		return 0 // unreachable for the catalog's names; a test checks every profile
	}
	return gib(n)
}
