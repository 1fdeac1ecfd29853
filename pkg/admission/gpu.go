package admission

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// DefaultGPUAccounting converts one pod's GPU requests into milli-GPU with the device
// model's rule (devices.AccountingMilli), learning the GPU model and its sharing from
// the flavor's GFD node labels: nvidia.com/gpu.product (with GFD's "-MIG-<profile>"
// suffix meaning the MIG single strategy) and nvidia.com/gpu.replicas (time-slicing).
// Without a known model a whole GPU is 1000, a replica 1000/replicas and a MIG profile
// "<g>g.<mem>" g sevenths of a GPU.
func DefaultGPUAccounting(pod resources.Vector, flavor *api.ResourceFlavor) (resources.MilliGPU, error) {
	r, err := devices.ParseRequest(pod)
	if err != nil {
		return 0, fmt.Errorf("flavor %s: %w", flavorName(flavor), err)
	}
	if r.IsZero() {
		return 0, nil
	}
	var labels map[string]string
	if flavor != nil {
		labels = flavor.NodeLabels
	}
	sharing := devices.Sharing{Mode: devices.Exclusive}
	if v, ok := labels[devices.LabelGPUReplicas]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("flavor %s: label %s=%q: want a positive integer", flavorName(flavor), devices.LabelGPUReplicas, v)
		}
		if n > 1 {
			sharing = devices.Sharing{Mode: devices.TimeSlicing, Replicas: n}
		}
	}
	product := labels[devices.LabelGPUProduct]
	model, modelErr := devices.LookupModel(product)
	if profile, ok := singleStrategyProfile(product); ok {
		if modelErr != nil && r.Units > 0 {
			// Unknown model under MIG single: value each unit by its profile's slices.
			r.MIG = append(r.MIG, devices.MIGCount{Profile: profile, Count: r.Units})
			r.Units = 0
		}
		sharing = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle, Layout: "all-" + profile}
	}
	if modelErr != nil {
		model = devices.Model{}
	}
	return devices.AccountingMilli(r, model, sharing), nil
}

func flavorName(f *api.ResourceFlavor) string {
	if f == nil {
		return "<none>"
	}
	return strconv.Quote(f.Name)
}

// singleStrategyProfile reads the MIG profile GFD appends to the product name under the
// "single" strategy ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb").
func singleStrategyProfile(product string) (string, bool) {
	i := strings.LastIndex(product, "-MIG-")
	if i < 0 {
		return "", false
	}
	return product[i+len("-MIG-"):], true
}
