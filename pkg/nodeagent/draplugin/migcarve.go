package draplugin

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// MIGCarver creates and destroys single MIG devices on the GPUs whose MIG layout is
// chosen at allocation time (all-dynamic): a claim allocated one of such a GPU's
// placement devices gets the instance created when it is prepared.
type MIGCarver interface {
	// Create makes sure GPU gpu holds instance in and returns its MIG device's UUID;
	// an instance already there is adopted.
	Create(gpu int, in devices.Instance) (string, error)
	// Destroy removes instance in of GPU gpu; none there is success.
	Destroy(gpu int, in devices.Instance) error
	// Whole makes sure GPU gpu, given whole to a claim, has MIG mode off so that CUDA
	// sees one GPU; MIG off already is success, and instances carved on it fail it.
	Whole(gpu int) error
}

// NVMLCarver carves through NVML with the node agent's MIG code, for the node's GPUs.
func NVMLCarver(lib nvml.Interface, gpus []devices.GPU) MIGCarver {
	c := nvmlCarver{lib: lib, models: map[int]devices.ModelID{}}
	for _, g := range gpus {
		c.models[g.Index] = g.Model
	}
	return c
}

type nvmlCarver struct {
	lib    nvml.Interface
	models map[int]devices.ModelID
}

func (c nvmlCarver) Create(gpu int, in devices.Instance) (string, error) {
	id, ok := c.models[gpu]
	if !ok {
		return "", fmt.Errorf("GPU %d is not a GPU of the node", gpu)
	}
	m, err := devices.LookupModel(string(id))
	if err != nil {
		return "", fmt.Errorf("GPU %d: %w", gpu, err)
	}
	return nodeagent.CreateMIGDevice(c.lib, m, gpu, in)
}

func (c nvmlCarver) Destroy(gpu int, in devices.Instance) error {
	return nodeagent.DestroyMIGDevice(c.lib, gpu, in)
}

func (c nvmlCarver) Whole(gpu int) error {
	if _, ok := c.models[gpu]; !ok {
		return fmt.Errorf("GPU %d is not a GPU of the node", gpu)
	}
	return nodeagent.UseWholeGPU(c.lib, gpu)
}

// placementOf reads a published device name as a placement of a dynamic GPU: its GPU
// index and instance; false for any other device.
func (d *Driver) placementOf(name string) (int, devices.Instance, bool) {
	id, ok := d.inv.DeviceID(name)
	if !ok {
		return 0, devices.Instance{}, false
	}
	a, err := devices.AssignmentFromIDs(d.nd, []string{id})
	if err != nil || len(a.Devices) != 1 || a.Devices[0].Kind != devices.MIGDevice || !d.dynamic[a.Devices[0].GPU] {
		return 0, devices.Instance{}, false
	}
	return a.Devices[0].GPU, a.Devices[0].Instance, true
}

// carveClaim creates the MIG devices of p's placements (those with Carved set) and
// fills in their UUIDs; on failure it destroys what it created.
func (d *Driver) carveClaim(p *preparedClaim) error {
	for i := range p.Devices {
		dev := &p.Devices[i]
		if dev.Carved == nil {
			continue
		}
		if d.cfg.MIG == nil {
			return d.uncarveAfter(p, i, fmt.Errorf("request %s: device %s is a MIG placement of GPU %d and this agent carves no MIG devices", dev.Request, dev.Device, dev.Carved.GPU))
		}
		uuid, err := d.cfg.MIG.Create(dev.Carved.GPU, dev.Carved.instance())
		if err != nil {
			return d.uncarveAfter(p, i, fmt.Errorf("request %s: device %s: %w", dev.Request, dev.Device, err))
		}
		dev.UUID = uuid
	}
	for r := range p.Requests {
		p.Requests[r].UUIDs = p.Requests[r].UUIDs[:0]
	}
	for _, dev := range p.Devices {
		for r := range p.Requests {
			if p.Requests[r].Request == dev.Request {
				p.Requests[r].UUIDs = append(p.Requests[r].UUIDs, dev.UUID)
			}
		}
	}
	return nil
}

// wholeClaim turns MIG mode off on the dynamic GPUs p is given whole (NVIDIA's DRA
// driver does the same for its dynamic MIG): with MIG mode on, the container would see
// no GPU. It runs after carveClaim, and on failure destroys what that carved. The
// plugin never prepares a GPU whole beside a carving of another claim
// (dynamicConflict), so the GPU is free of instances unless something outside the
// plugin carved it; a GPU given for admin access keeps its mode, as other claims may
// hold its instances. MIG mode stays off after unprepare: the next carving turns it on.
func (d *Driver) wholeClaim(p *preparedClaim) error {
	for _, dev := range p.Devices {
		gpu, whole := d.wholeDynamic[dev.Device]
		if !whole || dev.Carved != nil || dev.AdminAccess {
			continue
		}
		if d.cfg.MIG == nil {
			return d.uncarveAfter(p, len(p.Devices), fmt.Errorf("request %s: device %s is dynamic MIG GPU %d given whole and this agent changes no MIG mode (no MIG carver)", dev.Request, dev.Device, gpu))
		}
		if err := d.cfg.MIG.Whole(gpu); err != nil {
			return d.uncarveAfter(p, len(p.Devices), fmt.Errorf("request %s: device %s: %w", dev.Request, dev.Device, err))
		}
	}
	return nil
}

// uncarveAfter destroys the MIG devices carved for p's first n devices and returns
// cause (with any failure to destroy).
func (d *Driver) uncarveAfter(p *preparedClaim, n int, cause error) error {
	if err := d.uncarve(p.Devices[:n]); err != nil {
		return removeAfter(cause, err)
	}
	return cause
}

// uncarve destroys the carved MIG devices among devs.
func (d *Driver) uncarve(devs []preparedDevice) error {
	for _, dev := range devs {
		if dev.Carved == nil || d.cfg.MIG == nil {
			continue
		}
		if err := d.cfg.MIG.Destroy(dev.Carved.GPU, dev.Carved.instance()); err != nil {
			return fmt.Errorf("device %s: %w", dev.Device, err)
		}
	}
	return nil
}

// dynamicConflict is why device (on dynamic GPU gpu; whole when in is nil) cannot be
// prepared beside what other claims hold on that GPU: a GPU given whole holds no MIG
// device, and a GPU with a MIG device is not given whole.
func (d *Driver) dynamicConflict(self string, gpu int, whole bool) string {
	for uid, c := range d.cp.Claims {
		if string(uid) == self {
			continue
		}
		for _, o := range c.Devices {
			og, owhole, ok := d.dynamicDevice(o)
			if !ok || og != gpu || (!whole && !owhole) || o.AdminAccess {
				continue
			}
			return fmt.Sprintf("GPU %d holds %s for claim %s/%s", gpu, o.Device, c.Namespace, c.Name)
		}
	}
	return ""
}

// dynamicDevice reads a prepared device as one of a dynamic GPU: the GPU and whether it
// is the GPU whole.
func (d *Driver) dynamicDevice(o preparedDevice) (int, bool, bool) {
	if o.Carved != nil {
		return o.Carved.GPU, false, true
	}
	g, ok := d.wholeDynamic[o.Device]
	return g, true, ok
}
