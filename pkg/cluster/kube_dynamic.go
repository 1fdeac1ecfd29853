package cluster

import (
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// dynamicDevices builds the GPUs of a node whose MIG config is all-dynamic
// (devices.LayoutDynamic): NVIDIA's DRA driver carves MIG instances as claims are
// allocated, so no device plugin advertises these GPUs and their count comes from GFD's
// count label (or, failing that, the instance type's). Anything a device plugin does
// advertise is not what Gantry gives out here (extended resources need a fixed layout),
// which a warning says.
func (n *Node) dynamicDevices(m devices.Model, s devices.Sharing, labelCount int, assumed *assumption, pluginTotal resources.Vector, field string) (*devices.NodeDevices, []Warning, error) {
	var warns []Warning
	if assumed != nil {
		warns = append(warns, assumed.warning)
	}
	count := labelCount
	if count == 0 && assumed != nil {
		count = assumed.count
	}
	if count == 0 {
		return nil, nil, n.errf("metadata.labels["+devices.LabelGPUCount+"]", "cannot tell how many %s GPUs the node has (MIG config %s: no device plugin advertises them)", m.ID, s.Layout)
	}
	if !pluginTotal.IsZero() {
		warns = append(warns, n.warn(field, "the device plugin advertises %s, but MIG config %s leaves the layout to allocation time: only DRA claims get these GPUs", pluginTotal, s.Layout))
	}
	s = devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
	devs, err := buildFromLabels(m, s, count, n.gpusPerNVLink())
	if err != nil {
		return nil, nil, n.errf("metadata.labels["+devices.LabelMIGConfig+"]", "%v", err)
	}
	return devs, warns, nil
}
