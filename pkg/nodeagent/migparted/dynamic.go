package migparted

import "github.com/gantry-sched/gantry/pkg/devices"

// Dynamic names the MIG layout chosen at allocation time (devices.LayoutDynamic): MIG
// mode on, no instance until a DRA claim is allocated one, and the DRA kubelet plugin
// carving it. It is not a layout a MIG manager applies, so every file offers it (Has,
// Resolve): written in the node's nvidia.com/mig.config label, it needs no entry in the
// ConfigMap. A file may still define it, for NVIDIA's MIG manager reading the same
// file, but only as MIG on without instances (checkDynamic).
const Dynamic = devices.LayoutDynamic

// IsDynamic reports whether config name is Dynamic, spelled as devices.Sharing.DynamicMIG
// reads a layout.
func IsDynamic(name string) bool {
	return devices.Sharing{Mode: devices.MIG, Layout: name}.DynamicMIG()
}

// dynamicConfig is Dynamic when the file does not define it: MIG on without instances
// on every GPU that has MIG (devices: all skips the others).
func dynamicConfig() Config {
	return Config{Name: Dynamic, Entries: []Entry{{AllDevices: true, MIGEnabled: true, MIGDevices: map[string]int{}}}}
}

// checkDynamic refuses a file's definition of Dynamic that creates instances or turns
// MIG off: the DRA plugin carves on every MIG GPU of such a node, so a layout here
// would be destroyed claim by claim, or never carvable.
func checkDynamic(a at, c Config) error {
	for i, e := range c.Entries {
		if !e.MIGEnabled || len(e.MIGDevices) > 0 {
			return a.inEntry(i).errorf(e.Line, "%s is the layout chosen at allocation time: its entries may only turn MIG on without instances (mig-enabled: true, mig-devices: {})", Dynamic)
		}
	}
	return nil
}
