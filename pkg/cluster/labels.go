package cluster

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Node labels read by NodeFromKube. The nvidia.com ones are written by NVIDIA's GPU
// Feature Discovery and MIG manager; the gantry.dev ones are Gantry's own.
const (
	LabelGPUProduct      = "nvidia.com/gpu.product"
	LabelGPUCount        = "nvidia.com/gpu.count"
	LabelGPUMemory       = "nvidia.com/gpu.memory"
	LabelMIGCapable      = "nvidia.com/mig.capable"
	LabelMIGConfig       = "nvidia.com/mig.config"
	LabelMIGStrategy     = "nvidia.com/mig.strategy"
	LabelGPUReplicas     = "nvidia.com/gpu.replicas"
	LabelSharingStrategy = "nvidia.com/gpu.sharing-strategy"

	// LabelGPUSharing = "fractional" marks a node whose GPUs are shared by milli-GPU
	// and memory fractions (Gantry's own mode; GFD has no label for it).
	LabelGPUSharing = "gantry.dev/gpu-sharing"
	// LabelGPUsPerNVLinkDomain splits a node's GPUs into NVLink domains of that many
	// GPUs (GPU i is in domain i/size); absent means one domain (NVSwitch systems).
	LabelGPUsPerNVLinkDomain = "gantry.dev/gpus-per-nvlink-domain"

	// Alibaba's GPU-sharing scheduler labels and resources, as in the openb trace's node
	// YAML: such nodes share their GPUs by fractions.
	LabelAlibabaGPUModel    = "alibabacloud.com/gpu-card-model"
	ResourceAlibabaGPUCount = "alibabacloud.com/gpu-count"
	ResourceAlibabaGPUMilli = "alibabacloud.com/gpu-milli"

	// Cloud capacity-type labels understood besides api.LabelCapacityType.
	LabelKarpenterCapacityType = "karpenter.sh/capacity-type"
	LabelGKESpot               = "cloud.google.com/gke-spot"
	LabelGKEPreemptible        = "cloud.google.com/gke-preemptible"
	LabelEKSCapacityType       = "eks.amazonaws.com/capacityType"
	LabelAKSPriority           = "kubernetes.azure.com/scalesetpriority"
)

// capacityTypeOf reads the capacity type from Gantry's label, then the common cloud
// labels; the default is on-demand. ok is false when Gantry's label has an unknown value.
func capacityTypeOf(labels map[string]string) (ct string, ok bool) {
	if v, has := labels[api.LabelCapacityType]; has {
		switch v {
		case api.CapacityOnDemand, api.CapacitySpot, api.CapacityReserved:
			return v, true
		}
		return "", false
	}
	switch {
	case strings.EqualFold(labels[LabelKarpenterCapacityType], "spot"),
		labels[LabelGKESpot] == "true",
		labels[LabelGKEPreemptible] == "true",
		strings.EqualFold(labels[LabelEKSCapacityType], "SPOT"),
		strings.EqualFold(labels[LabelAKSPriority], "spot"):
		return api.CapacitySpot, true
	case strings.EqualFold(labels[LabelKarpenterCapacityType], "reserved"):
		return api.CapacityReserved, true
	}
	return api.CapacityOnDemand, true
}

// poolOf reads the node pool from Gantry's label, then the common cloud labels.
func poolOf(labels map[string]string) string {
	for _, k := range []string{api.LabelNodePool, "karpenter.sh/nodepool", "cloud.google.com/gke-nodepool", "eks.amazonaws.com/nodegroup", "kubernetes.azure.com/agentpool"} {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return ""
}
