package devices

import "github.com/gantry-sched/gantry/pkg/resources"

// Sources: NVIDIA's MIG User Guide ("Supported GPUs", "Supported MIG Profiles") for
// compute capabilities, profile geometry and per-GPU counts; mig-parted's default config
// (config-default.yaml) for profile names and the all-balanced layouts; GPU Feature
// Discovery's sanitised product names (NVML's name, spaces -> "-") for Products. The
// MIG geometries and their memory figures are in catalog_mig.go.

// catalog builds the model table; catalog_table.go builds it once and hands out copies.
func catalog() []Model {
	return append(append(ampere(), hopper()...), append(blackwell(), older()...)...)
}

func ampere() []Model {
	return []Model{
		withMIG(withPCI(model("A100-SXM4-40GB", "Ampere", 8, 0, 40,
			// The PCIe board has the same die, memory and MIG geometry.
			[]string{"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-PCIE-40GB", "A100-PCIE-40GB"},
			[]string{"A100", "A100-40GB", "A100-SXM4"}), 0x20B010DE, 0x20B110DE, 0x20F110DE), a100x40()),
		withMIG(withPCI(model("A100-SXM4-80GB", "Ampere", 8, 0, 80,
			[]string{"NVIDIA-A100-SXM4-80GB", "NVIDIA-A100-80GB-PCIe", "NVIDIA-A100-PCIE-80GB"}, []string{"A100-80GB"}), 0x20B210DE, 0x20B510DE), a100x80()),
		// A800: the A100 die with NVLink cut for export; same memory and MIG geometry.
		withMIG(withPCI(model("A800-SXM4-40GB", "Ampere", 8, 0, 40,
			[]string{"NVIDIA-A800-SXM4-40GB", "NVIDIA-A800-40GB-PCIe", "NVIDIA-A800-PCIE-40GB"},
			[]string{"A800-40GB"}), 0x20F610DE), a100x40()),
		withMIG(withPCI(model("A800-SXM4-80GB", "Ampere", 8, 0, 80,
			[]string{"NVIDIA-A800-SXM4-80GB", "NVIDIA-A800-80GB-PCIe"}, []string{"A800", "A800-80GB"}), 0x20F310DE, 0x20F510DE), a100x80()),
		withMIG(withPCI(model("A30-24GB", "Ampere", 8, 0, 24, []string{"NVIDIA-A30"}, []string{"A30"}), 0x20B710DE), a30()),
		model("A10", "Ampere", 8, 6, 24, []string{"NVIDIA-A10"}, nil),
		model("A10G", "Ampere", 8, 6, 24, []string{"NVIDIA-A10G"}, nil),
		model("L4", "Ada", 8, 9, 24, []string{"NVIDIA-L4"}, nil),
		model("L40S", "Ada", 8, 9, 48, []string{"NVIDIA-L40S"}, nil),
	}
}

func hopper() []Model {
	return []Model{
		withMIG(withPCI(model("H100-SXM5-80GB", "Hopper", 9, 0, 80,
			[]string{"NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-SXM5-80GB", "NVIDIA-H100-PCIe"},
			[]string{"H100", "H100-80GB", "H100-SXM5"}), 0x233010DE, 0x233110DE), h100x80()),
		withMIG(withPCI(model("H800-80GB", "Hopper", 9, 0, 80,
			[]string{"NVIDIA-H800", "NVIDIA-H800-80GB-HBM3", "NVIDIA-H800-PCIe"}, []string{"H800"}), 0x232210DE, 0x232410DE), h100x80()),
		withMIG(withPCI(model("H100-NVL-94GB", "Hopper", 9, 0, 94, []string{"NVIDIA-H100-NVL"}, []string{"H100-NVL", "H100-94GB"}), 0x232110DE), h100x94()),
		withMIG(withPCI(model("H800-NVL-94GB", "Hopper", 9, 0, 94, []string{"NVIDIA-H800-NVL"}, []string{"H800-NVL"}), 0x233A10DE), h100x94()),
		withMIG(withPCI(model("H200-141GB", "Hopper", 9, 0, 141,
			[]string{"NVIDIA-H200", "NVIDIA-H200-141GB-HBM3E", "NVIDIA-H200-NVL"}, []string{"H200", "H200-SXM5"}), 0x233510DE, 0x233B10DE), h200()),
		// H20 and the Grace Hopper superchip's 96 GB H100 share one geometry.
		withMIG(withPCI(model("H20-96GB", "Hopper", 9, 0, 96, []string{"NVIDIA-H20"}, []string{"H20"}), 0x232910DE), hopper96()),
		withMIG(withPCI(model("GH200-96GB", "Hopper", 9, 0, 96,
			[]string{"NVIDIA-GH200-480GB", "NVIDIA-GH200-120GB"}, []string{"GH200"}), 0x234210DE), hopper96()),
		withMIG(withPCI(model("GH200-144GB", "Hopper", 9, 0, 144,
			[]string{"NVIDIA-GH200-144G-HBM3e"}, []string{"GH200-144GB"}), 0x234810DE), gh200x144()),
	}
}

func blackwell() []Model {
	return []Model{
		withMIG(withPCI(model("B200-180GB", "Blackwell", 10, 0, 180, []string{"NVIDIA-B200", "NVIDIA-B200-180GB-HBM3e"}, []string{"B200"}), 0x290110DE), b200()),
		withMIG(withPCI(model("GB200-186GB", "Blackwell", 10, 0, 186, []string{"NVIDIA-GB200"}, []string{"GB200"}), 0x294110DE), gb200()),
		withMIG(withPCI(model("B300-288GB", "Blackwell", 10, 3, 288, []string{"NVIDIA-B300-SXM6-AC", "NVIDIA-B300"}, []string{"B300"}), 0x318210DE), b300()),
		withMIG(withPCI(model("GB300-288GB", "Blackwell", 10, 3, 288, []string{"NVIDIA-GB300"}, []string{"GB300"}), 0x31C210DE), gb300()),
		withMIG(withPCI(model("RTX-PRO-6000-Blackwell", "Blackwell", 12, 0, 96,
			[]string{"NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition", "NVIDIA-RTX-PRO-6000-Blackwell-Workstation-Edition",
				"NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstation-Edition"},
			[]string{"RTX-PRO-6000", "RTX-PRO-6000-Blackwell-Server-Edition"}), 0x2BB510DE), rtxPro6000()),
	}
}

func older() []Model {
	return []Model{
		model("V100-SXM2-16GB", "Volta", 7, 0, 16, []string{"Tesla-V100-SXM2-16GB", "Tesla-V100-PCIE-16GB"}, []string{"V100", "V100-16GB", "V100M16"}),
		model("V100-SXM2-32GB", "Volta", 7, 0, 32, []string{"Tesla-V100-SXM2-32GB", "Tesla-V100-PCIE-32GB"}, []string{"V100-32GB", "V100M32"}),
		model("P100-16GB", "Pascal", 6, 0, 16, []string{"Tesla-P100-PCIE-16GB", "Tesla-P100-SXM2-16GB"}, []string{"P100"}),
		model("T4", "Turing", 7, 5, 16, []string{"Tesla-T4", "NVIDIA-T4"}, nil),
		// G2 and G3 are the openb trace's anonymised GPU types; their memory is not
		// published, so 16 GiB is assumed (only memory-fraction requests depend on it).
		model("G2", "Unknown", 0, 0, 16, nil, []string{"openb-G2"}),
		model("G3", "Unknown", 0, 0, 16, nil, []string{"openb-G3"}),
	}
}

func gib(n int64) resources.MiB { return resources.MiB(n * 1024) }

// model is a catalog entry without MIG: id, family, compute capability, nominal memory
// (marketing GB x 1024), GFD products and further aliases.
func model(id ModelID, family string, ccMajor, ccMinor int, memGB int64, products, aliases []string) Model {
	return Model{ID: id, Family: family, ComputeMajor: ccMajor, ComputeMinor: ccMinor, Memory: gib(memGB),
		Products: products, Aliases: aliases}
}

// withPCI sets a model's PCI device IDs (from the PCI ID registry).
func withPCI(m Model, ids ...uint32) Model {
	m.PCIDeviceIDs = ids
	return m
}

func withMIG(m Model, g *MIGGeometry) Model {
	m.MIG = g
	return m
}
