package cluster

import (
	"strconv"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Labels that name a node's GPUs when GPU Feature Discovery's product label is missing
// or names a GPU the catalog does not know.
const (
	LabelGKEAccelerator = "cloud.google.com/gke-accelerator"
	LabelInstanceType   = "node.kubernetes.io/instance-type"
)

// assumption is what gpuModel had to assume, with the one warning that says so.
type assumption struct {
	warning Warning
	count   int // GPUs per node the instance type implies (0: not known from it)
}

// gpuModel finds the node's GPU model: GFD's product label when the catalog knows it,
// else the cloud's accelerator or instance-type label, else a generic GPU with the
// memory GFD reports (nvidia.com/gpu.memory, MiB). Any fallback comes with a warning
// naming what was assumed; no way to tell the memory is an error.
func (n *Node) gpuModel(product string, advertised resources.Vector) (devices.Model, *assumption, error) {
	productKey := "metadata.labels[" + devices.LabelGPUProduct + "]"
	if product != "" {
		m, lookupErr := devices.LookupModel(product)
		if lookupErr == nil {
			return m, nil, nil
		}
		if m, a, ok := n.cloudModel(productKey, "names a GPU model the catalog does not know ("+product+")"); ok {
			return m, a, nil
		}
		return n.genericModel(product, productKey, "unknown GPU model "+strconv.Quote(product))
	}
	if m, a, ok := n.cloudModel(productKey, "missing"); ok {
		return m, a, nil
	}
	return n.genericModel("", productKey, "missing, and no "+LabelGKEAccelerator+" or known "+LabelInstanceType+" label, but the node advertises "+advertised.String())
}

// cloudModel reads GKE's accelerator label, then the instance type.
func (n *Node) cloudModel(field, why string) (devices.Model, *assumption, bool) {
	if accel := n.Labels[LabelGKEAccelerator]; accel != "" {
		if m, ok := devices.ModelForGKEAccelerator(accel); ok {
			return m, &assumption{warning: n.warn(field, "%s: assuming %s from %s=%s", why, m.ID, LabelGKEAccelerator, accel)}, true
		}
	}
	if it := n.Labels[LabelInstanceType]; it != "" {
		if m, count, ok := devices.GPUsForInstanceType(it); ok {
			return m, &assumption{warning: n.warn(field, "%s: assuming %d x %s from %s=%s", why, count, m.ID, LabelInstanceType, it), count: count}, true
		}
	}
	return devices.Model{}, nil, false
}

// genericModel builds an uncatalogued GPU from nvidia.com/gpu.memory.
func (n *Node) genericModel(product, field, why string) (devices.Model, *assumption, error) {
	memKey := "metadata.labels[" + devices.LabelGPUMemory + "]"
	raw, ok := n.Labels[devices.LabelGPUMemory]
	if !ok {
		return devices.Model{}, nil, n.errf(field, "%s: cannot tell the GPU model, and %s is missing, so not even its memory is known", why, memKey)
	}
	mib, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || mib <= 0 {
		return devices.Model{}, nil, n.errf(memKey, "%q is not a positive number of MiB (needed for the generic GPU of %s)", raw, field)
	}
	m, err := devices.GenericModel(product, resources.MiB(mib))
	if err != nil {
		return devices.Model{}, nil, n.errf(memKey, "%v", err)
	}
	return m, &assumption{warning: n.warn(field, "%s: assuming a generic GPU (%s) with %d MiB from %s, without MIG", why, m.ID, mib, memKey)}, nil
}
