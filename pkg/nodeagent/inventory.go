package nodeagent

import (
	"fmt"
	"sort"
	"strconv"
	"sync"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// PluginDevice is one device the kubelet device plugin advertises. Its kubelet ID is
// its Gantry device ID, so the scheduler's gantry.dev/devices annotation, the kubelet's
// checkpoint and the device model all name devices the same way. A replica of a
// time-sliced MIG device is its MIG device's ID with "/replica-<r>" appended.
type PluginDevice struct {
	ID       string
	Resource resources.Name
	Device   devices.Device
	// UUID is what goes into NVIDIA_VISIBLE_DEVICES: the GPU's UUID, or the MIG device's.
	UUID         string
	NVLinkDomain int
	Healthy      bool
	// Replicas is how many replicas its GPU or MIG device is advertised as (0: not
	// replicated).
	Replicas int
	// MPSMemory is the per-client memory limit for MPS replicas (0 otherwise).
	MPSMemory resources.MiB
	// giID is the NVML GPU-instance ID of a MIG device (for health events).
	giID int
	// base is the ID of the physical device it is part of: a MIG replica's MIG device,
	// else its own ID. Health is the base's.
	base string
}

// Inventory is the node's advertisable devices and their health, shared by the device
// plugin servers (one per resource name) and the health loop. Safe for concurrent use.
type Inventory struct {
	mu      sync.Mutex
	sharing devices.Sharing
	byID    map[string]*PluginDevice
	order   []string // IDs in advertising order
	model   *devices.NodeDevices
	gpuDown map[int]bool // GPUs marked unhealthy as a whole (so also in model)
	// replicated are the devices each replicated resource's replicas come from.
	replicated devices.ReplicatedDevices
	subs       map[chan struct{}]bool
}

// NewInventory builds the inventory of a discovery under sharing s, as NVIDIA's device
// plugin advertises it: whole GPUs as nvidia.com/gpu; MIG devices as nvidia.com/gpu
// (single) or nvidia.com/mig-<profile> (mixed); the devices s replicates (time-slicing,
// MPS; whole GPUs or MIG devices) as that many replicas, under their name or its
// .shared rename. Fractional GPUs are advertised whole: fractions are Gantry's
// accounting, enforced by its assignments, not separate kubelet devices.
func NewInventory(d *Discovery, s devices.Sharing) (*Inventory, error) {
	gpus := make([]devices.GPU, len(d.GPUs))
	whole := 0 // position among the whole GPUs, for s's device counts
	for i, g := range d.GPUs {
		gpus[i] = g.GPU
		if !g.MIGEnabled && s.EffectiveMode() != devices.MIG {
			gpus[i].Sharing = s.ForGPU(devices.DeviceRef{Position: whole, Index: strconv.Itoa(g.Index), UUID: g.UUID})
			whole++
		}
	}
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		return nil, fmt.Errorf("node devices: %w", err)
	}
	inv := &Inventory{sharing: s, byID: map[string]*PluginDevice{}, model: nd, gpuDown: map[int]bool{}, subs: map[chan struct{}]bool{}}
	b := advertiser{node: s, model: d.Model, positions: map[resources.Name]int{}, replicated: devices.ReplicatedDevices{}}
	for i, g := range d.GPUs {
		for _, pd := range b.gpu(g, gpus[i].Sharing) {
			p := pd
			inv.byID[p.ID] = &p
			inv.order = append(inv.order, p.ID)
		}
	}
	inv.replicated = b.replicated
	return inv, nil
}

// ReplicatedDevices are the devices each replicated resource's replicas come from, for
// the node annotation devices.AnnotationReplicatedDevices (the labels only count them).
func (inv *Inventory) ReplicatedDevices() devices.ReplicatedDevices { return inv.replicated }

// advertiser lists what each GPU advertises, counting each resource's devices in
// order for NVIDIA's "devices: <count>" selections.
type advertiser struct {
	node      devices.Sharing
	model     devices.Model
	positions map[resources.Name]int
	// replicated collects the devices replicated, by resource (before any rename).
	replicated devices.ReplicatedDevices
}

// gpu lists what one GPU advertises under its sharing s.
func (b *advertiser) gpu(g GPUInfo, s devices.Sharing) []PluginDevice {
	base := PluginDevice{UUID: g.UUID, NVLinkDomain: g.NVLinkDomain, Healthy: g.Healthy}
	switch {
	case g.MIGEnabled && len(g.MIG) == 0:
		return nil // MIG on without instances: nothing can run on the GPU
	case len(g.MIG) > 0:
		var out []PluginDevice
		for k, mig := range g.MIG {
			out = append(out, b.mig(base, g.Index, k, mig, s)...)
		}
		return out
	case s.Replicates() && s.Replicas > 0:
		return b.gpuReplicas(base, g, s)
	}
	base.Device = devices.Device{GPU: g.Index, Kind: devices.WholeGPU}
	base.Resource = resources.NvidiaGPU
	base.ID = base.Device.ID()
	base.base = base.ID
	return []PluginDevice{base}
}

// gpuReplicas lists a time-sliced or MPS GPU's replicas. An MPS replica's memory limit
// is the GPU's memory as NVML reports it over the replicas, as NVIDIA's MPS daemon sets.
func (b *advertiser) gpuReplicas(base PluginDevice, g GPUInfo, s devices.Sharing) []PluginDevice {
	total := g.Memory
	if total == 0 {
		total = b.model.Memory
	}
	b.replicated[resources.NvidiaGPU] = append(b.replicated[resources.NvidiaGPU], strconv.Itoa(g.Index))
	out := make([]PluginDevice, s.Replicas)
	for r := range out {
		p := base
		p.Device = devices.Device{GPU: g.Index, Kind: devices.ReplicaDevice, Replica: r}
		p.Resource = resources.NvidiaGPU
		if s.RenameByDefault {
			p.Resource = resources.NvidiaGPUShared
		}
		p.Replicas = s.Replicas
		if s.EffectiveMode() == devices.MPS {
			p.MPSMemory = s.MPSClientMemory(total, s.Replicas)
		}
		p.ID = p.Device.ID()
		p.base = p.ID
		out[r] = p
	}
	return out
}

// mig lists one MIG device (the k-th of GPU gpu): itself, or its replicas when the node's
// sharing time-slices it.
func (b *advertiser) mig(base PluginDevice, gpu, k int, mig MIGDevice, s devices.Sharing) []PluginDevice {
	p := base
	p.Device = devices.Device{GPU: gpu, Kind: devices.MIGDevice, Instance: mig.Instance}
	p.UUID, p.giID = mig.UUID, mig.GpuInstanceID
	p.Resource = resources.NvidiaGPU
	if s.EffectiveMIGStrategy() == devices.MIGMixed {
		p.Resource = resources.MIGResource(mig.Instance.Profile)
	}
	p.ID = p.Device.ID()
	p.base = p.ID
	ref := devices.DeviceRef{Position: b.positions[p.Resource], Index: strconv.Itoa(gpu) + ":" + strconv.Itoa(k), UUID: mig.UUID}
	b.positions[p.Resource]++
	r, ok := b.node.Replication(p.Resource, ref)
	if !ok {
		return []PluginDevice{p}
	}
	b.replicated[p.Resource] = append(b.replicated[p.Resource], ref.Index)
	out := make([]PluginDevice, r.Replicas)
	for i := range out {
		out[i] = p
		out[i].Resource = b.node.AdvertisedName(r)
		out[i].Device.Replica = i
		out[i].Replicas = r.Replicas
		out[i].ID = p.ID + migReplicaInfix + strconv.Itoa(i)
	}
	return out
}

// migReplicaInfix joins a MIG device's ID and a replica number.
const migReplicaInfix = "/replica-"

// Sharing is the node's configured sharing mode.
func (inv *Inventory) Sharing() devices.Sharing { return inv.sharing }

// Resources lists the resource names advertised, sorted.
func (inv *Inventory) Resources() []resources.Name {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	seen := map[resources.Name]bool{}
	var out []resources.Name
	for _, id := range inv.order {
		if r := inv.byID[id].Resource; !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Devices returns copies of the devices advertised under resource, in order.
func (inv *Inventory) Devices(resource resources.Name) []PluginDevice {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	var out []PluginDevice
	for _, id := range inv.order {
		if p := inv.byID[id]; p.Resource == resource {
			out = append(out, *p)
		}
	}
	return out
}

// Lookup returns a copy of the device with a Gantry ID.
func (inv *Inventory) Lookup(id string) (PluginDevice, bool) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	p, ok := inv.byID[id]
	if !ok {
		return PluginDevice{}, false
	}
	return *p, true
}

// Subscribe returns a channel that receives a value after every health change (changes
// coalesce: one pending value at most) and a function to unsubscribe.
func (inv *Inventory) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	inv.mu.Lock()
	inv.subs[ch] = true
	inv.mu.Unlock()
	return ch, func() {
		inv.mu.Lock()
		delete(inv.subs, ch)
		inv.mu.Unlock()
	}
}

// SetHealth marks every device of GPU gpu healthy or not. It returns the IDs that
// changed and notifies subscribers when any did.
func (inv *Inventory) SetHealth(gpu int, healthy bool) []string {
	return inv.setHealth(func(p *PluginDevice) bool { return p.Device.GPU == gpu }, healthy, gpu, true)
}

// SetDeviceHealth marks one device (by Gantry ID) healthy or not, with every replica of
// the same MIG device: they are one piece of hardware.
func (inv *Inventory) SetDeviceHealth(id string, healthy bool) []string {
	inv.mu.Lock()
	base := id
	if p, ok := inv.byID[id]; ok {
		base = p.base
	}
	inv.mu.Unlock()
	return inv.setHealth(func(p *PluginDevice) bool { return p.base == base }, healthy, -1, false)
}

func (inv *Inventory) setHealth(match func(*PluginDevice) bool, healthy bool, gpu int, whole bool) []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	var changed []string
	for _, id := range inv.order {
		p := inv.byID[id]
		if match(p) && p.Healthy != healthy {
			p.Healthy = healthy
			changed = append(changed, id)
		}
	}
	if whole {
		_ = inv.model.SetHealthy(gpu, healthy) // unknown GPU: nothing matched either
		inv.gpuDown[gpu] = !healthy
	}
	if len(changed) > 0 {
		for ch := range inv.subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	return changed
}

// Unhealthy lists the IDs of unhealthy devices, in order.
func (inv *Inventory) Unhealthy() []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	var out []string
	for _, id := range inv.order {
		if !inv.byID[id].Healthy {
			out = append(out, id)
		}
	}
	return out
}
