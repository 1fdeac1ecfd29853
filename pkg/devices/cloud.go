package devices

import "strings"

// Nodes without GPU Feature Discovery labels still name their GPUs through their cloud:
// GKE's cloud.google.com/gke-accelerator label and the instance type in
// node.kubernetes.io/instance-type (EKS, AKS, GKE). These tables map them to catalog
// models; they are functions so nothing is package state.

// gkeAccelerators maps GKE accelerator names to catalog IDs.
func gkeAccelerators() map[string]ModelID {
	return map[string]ModelID{
		"nvidia-tesla-p100": "P100-16GB", "nvidia-tesla-v100": "V100-SXM2-16GB", "nvidia-tesla-t4": "T4",
		"nvidia-tesla-a100": "A100-SXM4-40GB", "nvidia-a100-80gb": "A100-SXM4-80GB", "nvidia-l4": "L4",
		"nvidia-h100-80gb": "H100-SXM5-80GB", "nvidia-h100-mega-80gb": "H100-SXM5-80GB",
		"nvidia-h200-141gb": "H200-141GB", "nvidia-b200": "B200-180GB", "nvidia-gb200": "GB200-186GB",
		"nvidia-b300": "B300-288GB", "nvidia-gb300": "GB300-288GB", "nvidia-rtx-pro-6000": "RTX-PRO-6000-Blackwell",
	}
}

// InstanceGPUs is what an instance type carries: its GPU model and how many.
type InstanceGPUs struct {
	Model ModelID
	Count int
}

// instanceTypes maps cloud instance types (lower-cased) to their GPUs.
func instanceTypes() map[string]InstanceGPUs {
	t := map[string]InstanceGPUs{
		// AWS
		"p3.2xlarge": {"V100-SXM2-16GB", 1}, "p3.8xlarge": {"V100-SXM2-16GB", 4}, "p3.16xlarge": {"V100-SXM2-16GB", 8},
		"p3dn.24xlarge": {"V100-SXM2-32GB", 8}, "p4d.24xlarge": {"A100-SXM4-40GB", 8}, "p4de.24xlarge": {"A100-SXM4-80GB", 8},
		"p5.4xlarge": {"H100-SXM5-80GB", 1}, "p5.48xlarge": {"H100-SXM5-80GB", 8}, "p5e.48xlarge": {"H200-141GB", 8},
		"p5en.48xlarge": {"H200-141GB", 8}, "p6-b200.48xlarge": {"B200-180GB", 8}, "p6-b300.48xlarge": {"B300-288GB", 8},
		"g4dn.12xlarge": {"T4", 4}, "g4dn.metal": {"T4", 8},
		// Azure
		"standard_nd40rs_v2": {"V100-SXM2-32GB", 8}, "standard_nd96asr_v4": {"A100-SXM4-40GB", 8},
		"standard_nd96amsr_a100_v4": {"A100-SXM4-80GB", 8}, "standard_nc24ads_a100_v4": {"A100-SXM4-80GB", 1},
		"standard_nc48ads_a100_v4": {"A100-SXM4-80GB", 2}, "standard_nc96ads_a100_v4": {"A100-SXM4-80GB", 4},
		"standard_nd96isr_h100_v5": {"H100-SXM5-80GB", 8}, "standard_nd96isr_h200_v5": {"H200-141GB", 8},
		"standard_nc40ads_h100_v5": {"H100-NVL-94GB", 1}, "standard_nc80adis_h100_v5": {"H100-NVL-94GB", 2},
		"standard_nc4as_t4_v3": {"T4", 1}, "standard_nc8as_t4_v3": {"T4", 1}, "standard_nc16as_t4_v3": {"T4", 1},
		"standard_nc64as_t4_v3": {"T4", 4},
		// Google Cloud
		"a2-highgpu-1g": {"A100-SXM4-40GB", 1}, "a2-highgpu-2g": {"A100-SXM4-40GB", 2}, "a2-highgpu-4g": {"A100-SXM4-40GB", 4},
		"a2-highgpu-8g": {"A100-SXM4-40GB", 8}, "a2-megagpu-16g": {"A100-SXM4-40GB", 16},
		"a2-ultragpu-1g": {"A100-SXM4-80GB", 1}, "a2-ultragpu-2g": {"A100-SXM4-80GB", 2}, "a2-ultragpu-4g": {"A100-SXM4-80GB", 4},
		"a2-ultragpu-8g": {"A100-SXM4-80GB", 8}, "a3-highgpu-8g": {"H100-SXM5-80GB", 8}, "a3-megagpu-8g": {"H100-SXM5-80GB", 8},
		"a3-ultragpu-8g": {"H200-141GB", 8}, "a4-highgpu-8g": {"B200-180GB", 8},
	}
	// The AWS g4dn/g5/g6/g6e families: one GPU up to 16xlarge, four at 12x/24xlarge,
	// eight at 48xlarge.
	for family, id := range map[string]ModelID{"g4dn": "T4", "g5": "A10G", "g6": "L4", "g6e": "L40S"} {
		for _, size := range []string{"xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge"} {
			t[family+"."+size] = InstanceGPUs{id, 1}
		}
		if family != "g4dn" {
			t[family+".12xlarge"], t[family+".24xlarge"], t[family+".48xlarge"] = InstanceGPUs{id, 4}, InstanceGPUs{id, 4}, InstanceGPUs{id, 8}
		}
	}
	return t
}

// ModelForGKEAccelerator maps a cloud.google.com/gke-accelerator value ("nvidia-l4") to
// its catalog model.
func ModelForGKEAccelerator(accel string) (Model, bool) {
	id, ok := gkeAccelerators()[strings.ToLower(strings.TrimSpace(accel))]
	if !ok {
		return Model{}, false
	}
	m, err := LookupModel(string(id))
	return m, err == nil
}

// GPUsForInstanceType maps a node.kubernetes.io/instance-type value ("p5.48xlarge",
// "Standard_ND96asr_v4", "a3-highgpu-8g") to its catalog model and GPU count.
func GPUsForInstanceType(instanceType string) (Model, int, bool) {
	g, ok := instanceTypes()[strings.ToLower(strings.TrimSpace(instanceType))]
	if !ok {
		return Model{}, 0, false
	}
	m, err := LookupModel(string(g.Model))
	return m, g.Count, err == nil
}
