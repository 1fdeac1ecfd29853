package migparted

import "sort"

// Version is the only mig-parted config version understood.
const Version = "v1"

// Spec is one parsed mig-parted config file.
type Spec struct {
	// File names the source in errors.
	File    string
	Configs map[string]Config
}

// Config is one named config: its entries in file order.
type Config struct {
	Name    string
	Line    int
	Entries []Entry
}

// Entry is one element of a named config's list.
type Entry struct {
	Line int
	// DeviceFilter lists the PCI device IDs the entry applies to; empty: every GPU.
	DeviceFilter []DeviceID
	// AllDevices is `devices: all`; otherwise Devices lists GPU indexes.
	AllDevices bool
	Devices    []int
	MIGEnabled bool
	// MIGDevices maps profile names, as written, to instance counts. MIG enabled with
	// no devices (`mig-devices: {}`) turns MIG on and creates nothing.
	MIGDevices map[string]int
}

// Names lists the configs, sorted.
func (s *Spec) Names() []string {
	out := make([]string, 0, len(s.Configs))
	for n := range s.Configs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Has reports whether config name can be asked for: the file defines it, or it is
// Dynamic, which every file offers.
func (s *Spec) Has(name string) bool {
	_, ok := s.config(name)
	return ok
}

// config is the named config: the file's, else the built-in Dynamic.
func (s *Spec) config(name string) (Config, bool) {
	if c, ok := s.Configs[name]; ok {
		return c, true
	}
	if IsDynamic(name) {
		return dynamicConfig(), true
	}
	return Config{}, false
}

// selects reports whether the entry applies to the GPU at index with PCI ID id.
func (e Entry) selects(index int, id uint32, subsystem uint32) bool {
	if len(e.DeviceFilter) > 0 {
		match := false
		for _, f := range e.DeviceFilter {
			match = match || f.Matches(id, subsystem)
		}
		if !match {
			return false
		}
	}
	if e.AllDevices {
		return true
	}
	for _, d := range e.Devices {
		if d == index {
			return true
		}
	}
	return false
}
