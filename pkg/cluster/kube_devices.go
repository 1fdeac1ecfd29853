package cluster

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// devicesFromKube builds the node's GPUs from its GFD labels and reconciles them with the
// device-plugin resources the node advertises (adv). Capacity wins on disagreement. A
// GPU model the labels do not name, or that the catalog does not know, is taken from the
// cloud's labels or built as a generic GPU (gpuModel), with a warning.
func devicesFromKube(n *Node, adv resources.Vector, field string) (*devices.NodeDevices, []Warning, error) {
	product := n.Labels[LabelGPUProduct]
	if product == "" && n.Labels[LabelAlibabaGPUModel] != "" {
		return alibabaDevices(n, field)
	}
	labelCount, err := n.intLabel(LabelGPUCount)
	if err != nil {
		return nil, nil, err
	}
	pluginTotal := pluginResources(adv)
	if product == "" && pluginTotal.IsZero() {
		return nil, nil, nil
	}
	model, assumed, err := n.gpuModel(product, pluginTotal)
	if err != nil {
		return nil, nil, err
	}
	sharing, err := n.sharingFromLabels()
	if err != nil {
		return nil, nil, err
	}
	if adv[resources.NvidiaGPUShared] > 0 {
		sharing.RenameByDefault = true
	}
	var warns []Warning
	if assumed != nil {
		warns = append(warns, assumed.warning)
	}
	if pluginTotal.IsZero() {
		if labelCount > 0 {
			warns = append(warns, n.warn(field, "labels say %d %s GPUs but the device plugin advertises none: the node has no usable GPUs", labelCount, model.ID))
		}
		return nil, warns, nil
	}
	count := labelCount
	if derived, ok := countFromCapacity(model, sharing, adv); ok && derived != count {
		if labelCount > 0 {
			warns = append(warns, n.warn("metadata.labels["+LabelGPUCount+"]", "says %d GPUs but %s advertises %d: using %d", labelCount, field, derived, derived))
		}
		count = derived
	}
	if count == 0 && assumed != nil {
		count = assumed.count // the instance type's GPUs, when nothing else tells
	}
	if count == 0 {
		return nil, nil, n.errf("metadata.labels["+LabelGPUCount+"]", "cannot tell how many GPUs back %s", pluginTotal)
	}
	if err := devices.ValidateSharing(model, sharing); err != nil && sharing.Mode != devices.MIG {
		return nil, nil, n.errf("metadata.labels", "%v", err)
	}
	devs, err := buildFromLabels(model, sharing, count, n.gpusPerNVLink())
	if err == nil && pluginResources(devs.Capacity()).String() == pluginTotal.String() {
		return devs, warns, nil
	}
	// Labels and capacity disagree (or the MIG config is a custom name): rebuild a
	// mixed-strategy MIG layout from the advertised profile counts.
	if sharing.Mode == devices.MIG && sharing.MIGStrategy == devices.MIGMixed {
		devs2, err2 := buildFromMIGCapacity(model, sharing, count, adv, n.gpusPerNVLink())
		if err2 == nil {
			warns = append(warns, n.warn("metadata.labels["+LabelMIGConfig+"]", "layout %q does not match the advertised %s: using a layout built from %s", sharing.Layout, pluginTotal, field))
			return devs2, warns, nil
		}
	}
	if err != nil {
		return nil, nil, n.errf("metadata.labels", "%v", err)
	}
	return nil, nil, n.errf(field, "the device plugin advertises %s but the labels describe %s", pluginTotal, pluginResources(devs.Capacity()))
}

// alibabaDevices reads a node of Alibaba's GPU-sharing scheduler (the openb trace): the
// card model label and the alibabacloud.com/gpu-count resource, shared by fractions. The
// alibabacloud.com resources leave Allocatable, as the device model now serves them.
func alibabaDevices(n *Node, field string) (*devices.NodeDevices, []Warning, error) {
	key := "metadata.labels[" + LabelAlibabaGPUModel + "]"
	model, err := devices.LookupModel(n.Labels[LabelAlibabaGPUModel])
	if err != nil {
		return nil, nil, n.errf(key, "%v", err)
	}
	count := int(n.Allocatable[ResourceAlibabaGPUCount])
	delete(n.Allocatable, ResourceAlibabaGPUCount)
	delete(n.Allocatable, ResourceAlibabaGPUMilli)
	if count == 0 {
		return nil, []Warning{n.warn(field, "labels name GPU model %s but %s advertises no %s", model.ID, field, ResourceAlibabaGPUCount)}, nil
	}
	devs, err := buildFromLabels(model, devices.Sharing{Mode: devices.Fractional}, count, n.gpusPerNVLink())
	if err != nil {
		return nil, nil, n.errf(key, "%v", err)
	}
	return devs, nil, nil
}

// pluginResources keeps the names the NVIDIA device plugin advertises.
func pluginResources(v resources.Vector) resources.Vector {
	out := resources.Vector{}
	for k, a := range v {
		if _, mig := k.MIGProfile(); (mig || k == resources.NvidiaGPU || k == resources.NvidiaGPUShared) && a != 0 {
			out[k] = a
		}
	}
	return out
}

// countFromCapacity derives the number of physical GPUs from advertised capacity where
// the sharing mode allows it.
func countFromCapacity(m devices.Model, s devices.Sharing, adv resources.Vector) (int, bool) {
	switch s.Mode {
	case devices.Exclusive:
		return int(adv[resources.NvidiaGPU]), true
	case devices.TimeSlicing, devices.MPS:
		total := adv[resources.NvidiaGPU] + adv[resources.NvidiaGPUShared]
		return int(total) / max(s.Replicas, 1), true
	case devices.MIG:
		if s.MIGStrategy != devices.MIGSingle {
			return 0, false
		}
		one, err := m.ResolveLayout(s, 1)
		if err != nil || len(one) == 0 || len(one[0]) == 0 {
			return 0, false
		}
		return int(adv[resources.NvidiaGPU]) / len(one[0]), true
	}
	return 0, false
}

func (n *Node) gpusPerNVLink() int {
	v, err := n.intLabel(LabelGPUsPerNVLinkDomain)
	if err != nil {
		return 0
	}
	return v
}

// buildFromLabels makes count GPUs of model with sharing (MIG layouts resolved).
func buildFromLabels(m devices.Model, s devices.Sharing, count, perNVLink int) (*devices.NodeDevices, error) {
	var layout [][]devices.Instance
	if s.Mode == devices.MIG {
		l, err := m.ResolveLayout(s, count)
		if err != nil {
			return nil, err
		}
		layout = l
	}
	return devices.NewNodeDevicesWith([]devices.Model{m}, makeGPUs(m, s, count, perNVLink, layout))
}

// makeGPUs lays out count GPUs: NVLink domains of perNVLink GPUs (0 = one domain), two
// GPUs per PCIe switch as on HGX boards.
func makeGPUs(m devices.Model, s devices.Sharing, count, perNVLink int, layout [][]devices.Instance) []devices.GPU {
	gpus := make([]devices.GPU, count)
	for i := range gpus {
		g := devices.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), Model: m.ID, PCIeSwitch: i / 2, Sharing: s, Healthy: true}
		if perNVLink > 0 {
			g.NVLinkDomain = i / perNVLink
		}
		if i < len(layout) {
			g.Instances = layout[i]
		} else if len(layout) == 1 {
			g.Instances = layout[0]
		}
		gpus[i] = g
	}
	return gpus
}

// buildFromMIGCapacity packs the advertised MIG instances onto count GPUs, biggest
// profiles first, each at the first start slot the model's placement rules accept.
func buildFromMIGCapacity(m devices.Model, s devices.Sharing, count int, adv resources.Vector, perNVLink int) (*devices.NodeDevices, error) {
	type want struct {
		p devices.Profile
		n int
	}
	var wants []want
	for _, k := range adv.Names() {
		name, ok := k.MIGProfile()
		if !ok {
			continue
		}
		p, ok := m.Profile(name)
		if !ok {
			return nil, fmt.Errorf("%s: profile %q does not exist on %s", k, name, m.ID)
		}
		wants = append(wants, want{p, int(adv[k])})
	}
	sort.SliceStable(wants, func(i, j int) bool { return wants[i].p.MemorySlices > wants[j].p.MemorySlices })
	layout := make([][]devices.Instance, count)
	for _, w := range wants {
		for k := 0; k < w.n; k++ {
			if !placeInstance(m, layout, w.p) {
				return nil, fmt.Errorf("%d × %s do not fit on %d %s GPUs", w.n, w.p.Name, count, m.ID)
			}
		}
	}
	// Record the packed layout as mig-parted's custom per-GPU lists, so the sharing
	// value validates on its own.
	s.Layout, s.CustomProfiles = devices.LayoutCustom, make([][]string, count)
	for g, l := range layout {
		for _, in := range l {
			s.CustomProfiles[g] = append(s.CustomProfiles[g], in.Profile)
		}
	}
	return devices.NewNodeDevicesWith([]devices.Model{m}, makeGPUs(m, s, count, perNVLink, layout))
}

// placeInstance adds one instance of p to the first GPU and start slot that stay valid.
func placeInstance(m devices.Model, layout [][]devices.Instance, p devices.Profile) bool {
	for g := range layout {
		for _, st := range p.Starts {
			try := append(append([]devices.Instance(nil), layout[g]...), devices.Instance{Profile: p.Name, Start: st})
			if m.ValidateLayout(try) == nil {
				layout[g] = try
				return true
			}
		}
	}
	return false
}
