package cluster_test

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Nodes whose GPU model GFD does not name, or names but the catalog does not know, load
// from their other labels with exactly one warning naming the node and the assumption.
func TestNodeFromKubeModelFallbacks(t *testing.T) {
	cases := []struct {
		name      string
		labels    map[string]string
		alloc     map[string]string
		wantModel string // model ID of GPU 0 ("" = no GPUs)
		wantGPUs  int64  // nvidia.com/gpu in device capacity
		wantMem   resources.MiB
		wantWarn  string // substring of the only warning ("" = no warning)
		wantErr   string
	}{
		{name: "GFD B200", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-B200", devices.LabelGPUCount: "8"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantModel: "B200-180GB", wantGPUs: 8, wantMem: 8 * 180 * 1024},
		{name: "GFD B200 MIG mixed, +me advertised as .me", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-B200", devices.LabelGPUCount: "1",
			devices.LabelMIGConfig: "all-1g.23gb.me", devices.LabelMIGStrategy: "mixed"},
			alloc: map[string]string{"nvidia.com/mig-1g.23gb.me": "1"}, wantModel: "B200-180GB", wantMem: 23552},
		{name: "GKE accelerator, no GFD", labels: map[string]string{cluster.LabelGKEAccelerator: "nvidia-tesla-a100"},
			alloc: map[string]string{"nvidia.com/gpu": "2"}, wantModel: "A100-SXM4-40GB", wantGPUs: 2, wantMem: 2 * 40 * 1024,
			wantWarn: `node gpu-1: metadata.labels[nvidia.com/gpu.product]: missing: assuming A100-SXM4-40GB from cloud.google.com/gke-accelerator=nvidia-tesla-a100`},
		{name: "GKE H100", labels: map[string]string{cluster.LabelGKEAccelerator: "nvidia-h100-80gb"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantModel: "H100-SXM5-80GB", wantGPUs: 8, wantMem: 8 * 80 * 1024, wantWarn: "assuming H100-SXM5-80GB"},
		{name: "GKE L4", labels: map[string]string{cluster.LabelGKEAccelerator: "nvidia-l4"},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantModel: "L4", wantGPUs: 1, wantMem: 24 * 1024, wantWarn: "assuming L4"},
		{name: "EKS p4d", labels: map[string]string{cluster.LabelInstanceType: "p4d.24xlarge"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantModel: "A100-SXM4-40GB", wantGPUs: 8, wantMem: 8 * 40 * 1024, wantWarn: "assuming 8 x A100-SXM4-40GB from node.kubernetes.io/instance-type=p4d.24xlarge"},
		{name: "EKS p5", labels: map[string]string{cluster.LabelInstanceType: "p5.48xlarge"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantModel: "H100-SXM5-80GB", wantGPUs: 8, wantMem: 8 * 80 * 1024, wantWarn: "p5.48xlarge"},
		{name: "EKS g5", labels: map[string]string{cluster.LabelInstanceType: "g5.xlarge"},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantModel: "A10G", wantGPUs: 1, wantMem: 24 * 1024, wantWarn: "g5.xlarge"},
		{name: "AKS ND96asr_v4", labels: map[string]string{cluster.LabelInstanceType: "Standard_ND96asr_v4"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantModel: "A100-SXM4-40GB", wantGPUs: 8, wantMem: 8 * 40 * 1024, wantWarn: "Standard_ND96asr_v4"},
		{name: "unknown GFD product, memory label: generic", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-X300", devices.LabelGPUCount: "4", devices.LabelGPUMemory: "196608"},
			alloc: map[string]string{"nvidia.com/gpu": "4"}, wantModel: "generic-196608Mi-NVIDIA-X300", wantGPUs: 4, wantMem: 4 * 196608,
			wantWarn: `unknown GPU model "NVIDIA-X300": assuming a generic GPU (generic-196608Mi-NVIDIA-X300) with 196608 MiB`},
		{name: "unknown GFD product on a known instance type", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-H100-Mystery", cluster.LabelInstanceType: "p5.48xlarge"},
			alloc: map[string]string{"nvidia.com/gpu": "8"}, wantModel: "H100-SXM5-80GB", wantGPUs: 8, wantMem: 8 * 80 * 1024, wantWarn: "does not know (NVIDIA-H100-Mystery)"},
		{name: "no product, memory only: generic", labels: map[string]string{devices.LabelGPUMemory: "23034"},
			alloc: map[string]string{"nvidia.com/gpu": "2"}, wantModel: "generic-23034Mi", wantGPUs: 2, wantMem: 2 * 23034, wantWarn: "generic GPU"},
		{name: "unknown product, no memory", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-X300"},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantErr: `node "gpu-1" (<generated>): metadata.labels[nvidia.com/gpu.product]: unknown GPU model "NVIDIA-X300": cannot tell the GPU model, and metadata.labels[nvidia.com/gpu.memory] is missing`},
		{name: "bad memory label", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-X300", devices.LabelGPUMemory: "lots"},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantErr: `metadata.labels[nvidia.com/gpu.memory]: "lots" is not a positive number of MiB`},
		{name: "unknown GKE accelerator, no memory", labels: map[string]string{cluster.LabelGKEAccelerator: "nvidia-tesla-k80"},
			alloc: map[string]string{"nvidia.com/gpu": "1"}, wantErr: "cannot tell the GPU model"},
		{name: "generic GPU cannot be MIG", labels: map[string]string{devices.LabelGPUProduct: "NVIDIA-X300", devices.LabelGPUMemory: "1000", devices.LabelGPUCount: "1",
			devices.LabelMIGConfig: "all-1g.10gb", devices.LabelMIGStrategy: "mixed"},
			alloc: map[string]string{"nvidia.com/mig-1g.10gb": "7"}, wantErr: "generic-1000Mi-NVIDIA-X300"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := cluster.NodeFromKube(kubeNode(tc.labels, tc.alloc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gpus := n.Devices.GPUs()
			if len(gpus) == 0 || string(gpus[0].Model) != tc.wantModel {
				t.Fatalf("GPUs = %+v, want model %s", gpus, tc.wantModel)
			}
			capa := n.Devices.Capacity()
			if int64(capa[resources.NvidiaGPU]) != tc.wantGPUs || resources.MiB(capa[resources.GPUMemory]) != tc.wantMem {
				t.Fatalf("capacity = %s, want %d GPUs and %d MiB", capa, tc.wantGPUs, tc.wantMem)
			}
			switch {
			case tc.wantWarn == "" && len(n.Warnings) > 0:
				t.Fatalf("warnings = %v, want none", n.Warnings)
			case tc.wantWarn != "" && (len(n.Warnings) != 1 || !strings.Contains(n.Warnings[0].String(), tc.wantWarn)):
				t.Fatalf("warnings = %v, want one containing %q", n.Warnings, tc.wantWarn)
			}
			// Wherever the model is looked up again by its ID, it is the same model.
			if m, err := devices.LookupModel(tc.wantModel); err != nil || m.ID != gpus[0].Model {
				t.Fatalf("LookupModel(%s) = %s, %v", tc.wantModel, m.ID, err)
			}
		})
	}
}
