package nodeagent

import (
	"fmt"
	"sort"
	"sync"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// PluginDevice is one device the kubelet device plugin advertises. Its kubelet ID is
// its Gantry device ID, so the scheduler's gantry.dev/devices annotation, the kubelet's
// checkpoint and the device model all name devices the same way.
type PluginDevice struct {
	ID       string
	Resource resources.Name
	Device   devices.Device
	// UUID is what goes into NVIDIA_VISIBLE_DEVICES: the GPU's UUID, or the MIG device's.
	UUID         string
	NVLinkDomain int
	Healthy      bool
	// MPSMemory is the per-client memory limit for MPS replicas (0 otherwise).
	MPSMemory resources.MiB
	// giID is the NVML GPU-instance ID of a MIG device (for health events).
	giID int
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
	subs    map[chan struct{}]bool
}

// NewInventory builds the inventory of a discovery under sharing s: whole GPUs as
// nvidia.com/gpu; MIG instances as nvidia.com/gpu (single) or nvidia.com/mig-<profile>
// (mixed); time-slicing and MPS replicas as nvidia.com/gpu or, with renameByDefault,
// nvidia.com/gpu.shared. Fractional GPUs are advertised whole: fractions are Gantry's
// accounting, enforced by its assignments, not separate kubelet devices.
func NewInventory(d *Discovery, s devices.Sharing) (*Inventory, error) {
	gpus := make([]devices.GPU, len(d.GPUs))
	for i, g := range d.GPUs {
		gpus[i] = g.GPU
		if !g.MIGEnabled && s.EffectiveMode() != devices.MIG {
			gpus[i].Sharing = s
		}
	}
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		return nil, fmt.Errorf("node devices: %w", err)
	}
	inv := &Inventory{sharing: s, byID: map[string]*PluginDevice{}, model: nd, gpuDown: map[int]bool{}, subs: map[chan struct{}]bool{}}
	for i, g := range d.GPUs {
		for _, pd := range pluginDevices(g, gpus[i].Sharing, d.Model) {
			p := pd
			inv.byID[p.ID] = &p
			inv.order = append(inv.order, p.ID)
		}
	}
	return inv, nil
}

// pluginDevices lists what one GPU advertises.
func pluginDevices(g GPUInfo, s devices.Sharing, m devices.Model) []PluginDevice {
	base := PluginDevice{UUID: g.UUID, NVLinkDomain: g.NVLinkDomain, Healthy: g.Healthy}
	var out []PluginDevice
	switch {
	case g.MIGEnabled && len(g.MIG) == 0:
		return nil // MIG on without instances: nothing can run on the GPU
	case len(g.MIG) > 0:
		for _, mig := range g.MIG {
			p := base
			p.Device = devices.Device{GPU: g.Index, Kind: devices.MIGDevice, Instance: mig.Instance}
			p.UUID, p.giID = mig.UUID, mig.GpuInstanceID
			p.Resource = resources.NvidiaGPU
			if s.EffectiveMIGStrategy() == devices.MIGMixed {
				p.Resource = resources.MIGResource(mig.Instance.Profile)
			}
			out = append(out, p)
		}
	case s.EffectiveMode() == devices.TimeSlicing || s.EffectiveMode() == devices.MPS:
		for r := 0; r < s.Replicas; r++ {
			p := base
			p.Device = devices.Device{GPU: g.Index, Kind: devices.ReplicaDevice, Replica: r}
			p.Resource = resources.NvidiaGPU
			if s.RenameByDefault {
				p.Resource = resources.NvidiaGPUShared
			}
			if s.EffectiveMode() == devices.MPS {
				p.MPSMemory = s.ReplicaMemory(m)
			}
			out = append(out, p)
		}
	default:
		p := base
		p.Device = devices.Device{GPU: g.Index, Kind: devices.WholeGPU}
		p.Resource = resources.NvidiaGPU
		out = append(out, p)
	}
	for i := range out {
		out[i].ID = out[i].Device.ID()
	}
	return out
}

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

// SetDeviceHealth marks one device (by Gantry ID) healthy or not.
func (inv *Inventory) SetDeviceHealth(id string, healthy bool) []string {
	return inv.setHealth(func(p *PluginDevice) bool { return p.ID == id }, healthy, -1, false)
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
