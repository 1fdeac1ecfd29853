package cluster

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// devicesFromKube builds the node's GPUs from its GFD labels and reconciles them with the
// device-plugin resources the node advertises (adv). Capacity wins on disagreement,
// except on a node whose MIG config is all-dynamic (dynamicDevices), whose GPUs no
// device plugin advertises. A
// GPU model the labels do not name, or that the catalog does not know, is taken from the
// cloud's labels or built as a generic GPU (gpuModel), with a warning.
// replicated is the node agent's devices.AnnotationReplicatedDevices ("" when absent).
func devicesFromKube(n *Node, adv resources.Vector, field, replicated string) (*devices.NodeDevices, []Warning, error) {
	product := n.Labels[devices.LabelGPUProduct]
	if product == "" && n.Labels[LabelAlibabaGPUModel] != "" {
		return alibabaDevices(n, field)
	}
	labelCount, err := n.intLabel(devices.LabelGPUCount)
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
	if sharing.DynamicMIG() {
		return n.dynamicDevices(model, sharing, labelCount, assumed, pluginTotal, field)
	}
	if adv[resources.NvidiaGPUShared] > 0 {
		sharing.RenameByDefault = true
	}
	if sharing, err = n.replicatedFromLabels(model, sharing, labelCount, adv); err != nil {
		return nil, nil, err
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
			warns = append(warns, n.warn("metadata.labels["+devices.LabelGPUCount+"]", "says %d GPUs but %s advertises %d: using %d", labelCount, field, derived, derived))
		}
		count = derived
	}
	if count == 0 && assumed != nil {
		count = assumed.count // the instance type's GPUs, when nothing else tells
	}
	if count == 0 {
		return nil, nil, n.errf("metadata.labels["+devices.LabelGPUCount+"]", "cannot tell how many GPUs back %s", pluginTotal)
	}
	if err := devices.ValidateSharing(model, sharing); err != nil && sharing.Mode != devices.MIG {
		return nil, nil, n.errf("metadata.labels", "%v", err)
	}
	devs, err := buildFromLabels(model, sharing, count, n.gpusPerNVLink())
	if err == nil && pluginResources(devs.Capacity()).String() == pluginTotal.String() {
		return devs, warns, nil
	}
	if err == nil && len(sharing.Resources) > 0 {
		// A per-resource config replicating part of a resource's devices: the labels
		// give the replicas, the capacity how many devices have them.
		return n.selectFromCapacity(model, sharing, count, devs, adv, field, replicated, warns)
	}
	// Labels and capacity disagree (or the MIG config is a custom name): rebuild a
	// mixed-strategy MIG layout from the advertised profile counts.
	if sharing.Mode == devices.MIG && sharing.MIGStrategy == devices.MIGMixed {
		devs2, err2 := buildFromMIGCapacity(model, sharing, count, adv, n.gpusPerNVLink())
		if err2 == nil {
			warns = append(warns, n.warn("metadata.labels["+devices.LabelMIGConfig+"]", "layout %q does not match the advertised %s: using a layout built from %s", sharing.Layout, pluginTotal, field))
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
		if len(s.Resources) > 0 {
			return 0, false // a subset replicated: the count label tells
		}
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
		perGPU := len(one[0])
		for _, r := range s.Resources { // time-sliced MIG devices (validated: nvidia.com/gpu)
			perGPU *= r.Replicas
		}
		return int(adv[resources.NvidiaGPU]+adv[resources.NvidiaGPUShared]) / max(perGPU, 1), true
	}
	return 0, false
}

func (n *Node) gpusPerNVLink() int {
	v, err := n.intLabel(devices.LabelGPUsPerNVLinkDomain)
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

// replicatedFromLabels adds what GFD's labels say is replicated one resource at a time:
// time-sliced MIG profiles (nvidia.com/mig-<profile>.sharing-strategy and .replicas
// under mixed; nvidia.com/gpu.replicas under single), named as the capacity shows
// (the ".shared" rename when only it is advertised); and time-sliced or MPS whole GPUs
// whose advertised replicas do not cover all count GPUs, which NVIDIA's per-resource
// config gives a subset of them (selectFromCapacity finds how many).
func (n *Node) replicatedFromLabels(m devices.Model, s devices.Sharing, count int, adv resources.Vector) (devices.Sharing, error) {
	switch {
	case s.Mode == devices.MIG && s.MIGStrategy == devices.MIGSingle:
		replicas, err := n.intLabel(devices.LabelGPUReplicas)
		if err != nil || replicas <= 1 {
			return s, err
		}
		s.Resources = []devices.ReplicatedResource{entryFor(resources.NvidiaGPU, replicas, adv)}
		s.RenameByDefault = false
	case s.Mode == devices.MIG && m.MIG != nil:
		s.RenameByDefault = false
		for _, p := range m.MIG.Profiles {
			r, ok, err := n.migReplicasLabel(p.Name, adv)
			if err != nil {
				return s, err
			}
			if ok {
				s.Resources = append(s.Resources, r)
			}
		}
	case s.Replicates() && count > 0 && int(adv[resources.NvidiaGPU]+adv[resources.NvidiaGPUShared]) != count*s.Replicas:
		// The rename stays RenameByDefault (not the entry's Rename): every GPU's sharing
		// then names its replicas as the free index files them (pkg/cluster index_shift).
		r := devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: s.Replicas}
		if _, ok := replicatedCount(r, s.AdvertisedName(r), count, adv); ok {
			s.Resources, s.Replicas = []devices.ReplicatedResource{r}, 0
		} // else the count label is off: countFromCapacity corrects it, with a warning
	}
	return s, nil
}

// migReplicasLabel reads one MIG profile's replication from GFD's labels.
func (n *Node) migReplicasLabel(profile string, adv resources.Vector) (devices.ReplicatedResource, bool, error) {
	strategyKey, replicasKey := devices.MIGLabelKey(profile, "sharing-strategy"), devices.MIGLabelKey(profile, "replicas")
	switch strategy := n.Labels[strategyKey]; strategy {
	case "", "none":
		return devices.ReplicatedResource{}, false, nil
	case string(devices.TimeSlicing):
	default:
		return devices.ReplicatedResource{}, false, n.errf("metadata.labels["+strategyKey+"]", "%q: MIG devices are shared by time-slicing or not at all (want time-slicing or none)", strategy)
	}
	replicas, err := n.intLabel(replicasKey)
	if err != nil {
		return devices.ReplicatedResource{}, false, err
	}
	if replicas < 1 {
		return devices.ReplicatedResource{}, false, n.errf("metadata.labels["+replicasKey+"]", "%q: a time-sliced MIG profile needs at least 1 replica", n.Labels[replicasKey])
	}
	return entryFor(resources.MIGResource(profile), replicas, adv), true, nil
}

// entryFor is a per-resource entry replicating name, renamed to <name>.shared when the
// node advertises that name.
func entryFor(name resources.Name, replicas int, adv resources.Vector) devices.ReplicatedResource {
	r := devices.ReplicatedResource{Name: name, Replicas: replicas}
	if adv[name+devices.SharedSuffix] > 0 {
		r.Rename = name + devices.SharedSuffix
	}
	return r
}

// selectFromCapacity narrows each per-resource entry of s (built into all, where every
// device of the entry's resource is replicated) to the number of devices the capacity
// says are: with k of T devices replicated N times, the advertised name counts k×N
// (renamed) or T-k+k×N. Which devices the node agent's annotation says; without it
// (another device plugin) the first k are assumed (NVIDIA's "devices: <k>"), with a
// warning naming the node.
func (n *Node) selectFromCapacity(m devices.Model, s devices.Sharing, count int, all *devices.NodeDevices, adv resources.Vector, field, replicated string, warns []Warning) (*devices.NodeDevices, []Warning, error) {
	annField := "metadata.annotations[" + devices.AnnotationReplicatedDevices + "]"
	listed, err := devices.ParseReplicatedDevices(replicated)
	if err != nil {
		return nil, nil, n.errf(annField, "%v", err)
	}
	capAll := all.Capacity()
	s.Resources = append([]devices.ReplicatedResource(nil), s.Resources...)
	kept := s.Resources[:0]
	for _, r := range s.Resources {
		adName := s.AdvertisedName(r)
		total := int(capAll[adName]) / r.Replicas
		k, ok := replicatedCount(r, adName, total, adv)
		if !ok {
			return nil, nil, n.errf(field, "%s=%d is not what %d %s devices give with %d replicas each on some of them (%s=%d)",
				adName, adv[adName], total, r.Name, r.Replicas, r.Name, adv[r.Name])
		}
		refs, has := listed[r.Name]
		switch {
		case has && len(refs) != k:
			return nil, nil, n.errf(annField, "lists %d %s devices but %s says %d are replicated", len(refs), r.Name, field, k)
		case has && k > 0:
			r.Devices = refs
		case k < total:
			warns = append(warns, n.warn(field, "%d of %d %s devices are replicated %d times; the labels do not say which: assuming the first %d", k, total, r.Name, r.Replicas, k))
			r.DeviceCount = k
		default:
			r.DeviceCount = k
		}
		if k > 0 {
			kept = append(kept, r)
		}
	}
	s.Resources = kept
	if len(kept) == 0 && s.Mode != devices.MIG {
		s = devices.Sharing{Mode: devices.Exclusive}
	}
	devs, err := buildFromLabels(m, s, count, n.gpusPerNVLink())
	if err != nil {
		return nil, nil, n.errf("metadata.labels", "%v", err)
	}
	if got := pluginResources(devs.Capacity()); got.String() != pluginResources(adv).String() {
		return nil, nil, n.errf(field, "the device plugin advertises %s but the labels describe %s", pluginResources(adv), got)
	}
	return devs, warns, nil
}

// replicatedCount is k, the devices of r replicated, from the advertised counts.
func replicatedCount(r devices.ReplicatedResource, adName resources.Name, total int, adv resources.Vector) (int, bool) {
	if adName != r.Name {
		k := int(adv[adName]) / r.Replicas
		return k, k*r.Replicas == int(adv[adName]) && k <= total
	}
	if r.Replicas == 1 {
		return total, int(adv[adName]) == total
	}
	extra := int(adv[adName]) - total
	k := extra / (r.Replicas - 1)
	return k, extra >= 0 && k*(r.Replicas-1) == extra && k <= total
}
