package nodeagent

import (
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
)

// migPlan is a mig-parted config resolved for this node's GPUs.
type migPlan struct {
	config string
	model  devices.Model
	gpus   []migparted.Plan
	// keepInstances leaves the GPUs alone: on an all-dynamic agent (migparted.Dynamic)
	// the DRA plugin owns each GPU's MIG mode and instances per claim (MIG off for a GPU
	// given whole, on from the first carving), so the plan holds whatever they are.
	keepInstances bool
}

// resolveMIGConfig discovers the node and resolves config of spec for its GPUs. Every
// error (unknown config, profile, placement) comes before any GPU is touched.
func resolveMIGConfig(lib nvml.Interface, spec *migparted.Spec, config string) (migPlan, *Discovery, error) {
	d, err := Discover(lib, devices.Sharing{})
	if err != nil {
		return migPlan{}, nil, fmt.Errorf("discovery: %w", err)
	}
	gpus, err := migpartedGPUs(lib, d)
	if err != nil {
		return migPlan{}, nil, err
	}
	plans, err := spec.Resolve(config, gpus)
	if err != nil {
		return migPlan{}, nil, err
	}
	return migPlan{config: config, model: d.Model, gpus: plans}, d, nil
}

// migpartedGPUs describes the discovered GPUs for device filters: index, model and the
// PCI IDs NVML reports.
func migpartedGPUs(lib nvml.Interface, d *Discovery) ([]migparted.GPU, error) {
	out := make([]migparted.GPU, len(d.GPUs))
	for i, g := range d.GPUs {
		h, r := lib.DeviceGetHandleByIndex(g.Index)
		if r != nvml.SUCCESS {
			return nil, nvmlError(r, "GPU %d: getting its handle", g.Index)
		}
		pci, r := h.GetPciInfo()
		if r != nvml.SUCCESS {
			return nil, nvmlError(r, "GPU %d: reading its PCI IDs", g.Index)
		}
		out[i] = migparted.GPU{Index: g.Index, PCIID: pci.PciDeviceId, SubsystemID: pci.PciSubSystemId, Model: d.Model}
	}
	return out, nil
}

// holds reports whether the GPUs already have the plan: MIG mode and the same profiles
// (placement aside, as mig-parted compares, so a layout made by another tool is kept).
func (p migPlan) holds(d *Discovery) bool {
	for _, want := range p.gpus {
		if !want.Selected {
			continue
		}
		g, ok := gpuByIndex(d, want.Index)
		if !ok {
			return false
		}
		if p.keepInstances {
			continue
		}
		if g.MIGEnabled != want.MIGEnabled || !slices.Equal(profileCounts(g.Instances), profileCounts(want.Instances)) {
			return false
		}
	}
	return true
}

// mismatch names the first GPU whose read-back differs from the plan exactly ("" for none).
func (p migPlan) mismatch(d *Discovery) string {
	for _, want := range p.gpus {
		if !want.Selected {
			continue
		}
		g, ok := gpuByIndex(d, want.Index)
		switch {
		case !ok:
			return fmt.Sprintf("GPU %d is gone", want.Index)
		case !p.keepInstances && g.MIGEnabled != want.MIGEnabled:
			return fmt.Sprintf("GPU %d reads back MIG enabled %t, want %t", want.Index, g.MIGEnabled, want.MIGEnabled)
		case !p.keepInstances && fmt.Sprint(g.Instances) != fmt.Sprint(want.Instances):
			return fmt.Sprintf("GPU %d reads back %v, want %v", want.Index, g.Instances, want.Instances)
		}
	}
	return ""
}

func gpuByIndex(d *Discovery, index int) (GPUInfo, bool) {
	for _, g := range d.GPUs {
		if g.Index == index {
			return g, true
		}
	}
	return GPUInfo{}, false
}

// profileCounts is the sorted profile list of a layout.
func profileCounts(in []devices.Instance) []string {
	out := make([]string, len(in))
	for i, x := range in {
		out[i] = x.Profile
	}
	slices.Sort(out)
	return out
}

// apply changes each selected GPU; want is nil for MIG off and non-nil (perhaps empty,
// as all-enabled asks) for MIG on; with keepInstances only the MIG mode is set. The
// first error stops, naming the GPU.
func (p migPlan) apply(lib nvml.Interface) error {
	for _, g := range p.gpus {
		if !g.Selected {
			continue
		}
		if p.keepInstances {
			continue // the DRA plugin sets MIG mode per claim
		}
		var want []devices.Instance
		if g.MIGEnabled {
			want = append(make([]devices.Instance, 0, len(g.Instances)), g.Instances...)
		}
		if err := applyGPU(lib, p.model, g.Index, want); err != nil {
			return err
		}
	}
	return nil
}

// ApplyMIGConfig brings the GPUs to config of spec at once, without Kubernetes (no
// operands paused, no pods checked), and reads them back. Tools and tests use it; the
// agent goes through MIGManager.
func ApplyMIGConfig(lib nvml.Interface, spec *migparted.Spec, config string) error {
	plan, _, err := resolveMIGConfig(lib, spec, config)
	if err != nil {
		return err
	}
	if err := plan.apply(lib); err != nil {
		return err
	}
	d, err := Discover(lib, devices.Sharing{})
	if err != nil {
		return fmt.Errorf("reading back: %w", err)
	}
	if msg := plan.mismatch(d); msg != "" {
		return fmt.Errorf("MIG config %s: %s", config, msg)
	}
	return nil
}
