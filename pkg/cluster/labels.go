package cluster

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Node labels read by NodeFromKube besides the device layer's (devices.LabelGPUProduct
// and the rest of GPU Feature Discovery's, in pkg/devices/labels.go).
const (
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
