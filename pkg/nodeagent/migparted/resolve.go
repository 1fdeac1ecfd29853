package migparted

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// GPU is one GPU of a node as Resolve needs it.
type GPU struct {
	Index int
	// PCIID and SubsystemID are NVML's PciInfo.PciDeviceId and PciSubSystemId.
	PCIID       uint32
	SubsystemID uint32
	Model       devices.Model
}

// Plan is what a config wants of one GPU.
type Plan struct {
	Index int
	// Selected is false when no entry selects the GPU: it is left as it is.
	Selected   bool
	MIGEnabled bool
	// Instances, sorted by start slot, as devices.Model.PackProfiles places them.
	Instances []devices.Instance
}

// Resolve turns config name into one plan per GPU (in the order of gpus). Entries apply
// in file order, each to the GPUs it selects, a later entry replacing an earlier one's
// plan for a GPU. An unknown name, a profile a GPU's model lacks, a layout that breaks
// the model's placement rules, an index the node does not have or MIG on a GPU without
// MIG are errors naming the config, entry and field.
func (s *Spec) Resolve(name string, gpus []GPU) ([]Plan, error) {
	c, ok := s.config(name)
	if !ok {
		return nil, &Error{File: s.File, Entry: -1, Reason: "no config " + quote(name) + " (configs: " + strings.Join(s.Names(), ", ") + ")"}
	}
	plans := make([]Plan, len(gpus))
	for i, g := range gpus {
		plans[i].Index = g.Index
	}
	a := at{file: s.File}.inConfig(name)
	for ei, e := range c.Entries {
		ea := a.inEntry(ei)
		if err := e.checkIndexes(ea.inField("devices"), gpus); err != nil {
			return nil, err
		}
		for i, g := range gpus {
			if !e.selects(g.Index, g.PCIID, g.SubsystemID) {
				continue
			}
			p, skip, err := e.plan(ea, g)
			if err != nil {
				return nil, err
			}
			if !skip {
				plans[i] = p
			}
		}
	}
	return plans, checkSelected(a, plans, gpus)
}

// checkSelected refuses a config that selects none of the node's MIG-capable GPUs: it
// was written for other GPUs, and "success" after changing nothing would mislead.
func checkSelected(a at, plans []Plan, gpus []GPU) error {
	capable := false
	for i, p := range plans {
		if p.Selected {
			return nil
		}
		capable = capable || gpus[i].Model.MIG != nil
	}
	if !capable {
		return nil
	}
	ids := make([]string, len(gpus))
	for i, g := range gpus {
		ids[i] = DeviceID{ID: g.PCIID}.String()
	}
	return a.errorf(0, "selects none of the node's GPUs (%s, PCI IDs %s)", gpus[0].Model.ID, strings.Join(ids, " "))
}

// checkIndexes refuses explicit GPU indexes the node does not have.
func (e Entry) checkIndexes(a at, gpus []GPU) error {
	have := map[int]bool{}
	for _, g := range gpus {
		have[g.Index] = true
	}
	for _, d := range e.Devices {
		if !have[d] {
			return a.errorf(e.Line, "GPU %d does not exist (the node has %d GPUs)", d, len(gpus))
		}
	}
	return nil
}

// plan is the entry's plan for one GPU it selects. As mig-parted does, a GPU without
// MIG is skipped by `devices: all` and by MIG-off entries; MIG on for it by index is
// an error.
func (e Entry) plan(a at, g GPU) (p Plan, skip bool, err error) {
	if g.Model.MIG == nil {
		if e.AllDevices || !e.MIGEnabled {
			return Plan{}, true, nil
		}
		return Plan{}, false, a.inField("devices").errorf(e.Line, "GPU %d (%s) does not support MIG", g.Index, g.Model.ID)
	}
	p = Plan{Index: g.Index, Selected: true, MIGEnabled: e.MIGEnabled}
	profiles, err := e.profiles(a, g)
	if err != nil {
		return p, false, err
	}
	if p.Instances, err = g.Model.PackProfiles(profiles); err != nil {
		return p, false, a.inField("mig-devices").errorf(e.Line, "GPU %d: %v", g.Index, err)
	}
	return p, false, nil
}

// profiles expands mig-devices into catalog profile names for g's model, each repeated
// by its count, in name order.
func (e Entry) profiles(a at, g GPU) ([]string, error) {
	names := make([]string, 0, len(e.MIGDevices))
	for n := range e.MIGDevices {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		prof, ok := modelProfile(g.Model, n)
		if !ok {
			return nil, a.inField("mig-devices["+quote(n)+"]").errorf(e.Line,
				"GPU %d (%s) has no MIG profile %q (profiles: %s)", g.Index, g.Model.ID, n, strings.Join(g.Model.ProfileNames(), ", "))
		}
		for k := 0; k < e.MIGDevices[n]; k++ {
			out = append(out, prof.Name)
		}
	}
	return out, nil
}
