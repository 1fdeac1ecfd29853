package nodeagent

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Facts are what NVML reports that the devices catalog does not know for sure. Zero
// fields fall back: the compute capability to the catalog's, the machine type to GFD's
// "unknown"; a MIG profile without attributes gets no multiprocessor or engine labels.
type Facts struct {
	ComputeMajor, ComputeMinor int
	// MachineType is the system's product name (DMI), as GFD reads it.
	MachineType string
	// MIG holds NVML's MIG device attributes by profile (NVIDIA's spelling).
	MIG map[string]MIGAttributes
}

// MIGAttributes are one MIG device's attributes (nvmlDeviceGetAttributes).
type MIGAttributes struct {
	Multiprocessors, ComputeInstanceSlices              int
	CopyEngines, Decoders, Encoders, JPEGDecoders, OFAs int
}

// Labels returns the node labels for a discovery under sharing s, as GFD would write
// them (its MIG "single" strategy renames the product and counts MIG devices; "mixed"
// adds per-profile labels) plus Gantry's NVLink-domain labels, with the facts discovery
// read from NVML (d.Facts) and the catalog's where NVML said nothing.
func Labels(d *Discovery, s devices.Sharing) map[string]string {
	f := d.Facts
	l := map[string]string{
		devices.LabelMIGCapable: strconv.FormatBool(d.MIGCapable),
		devices.LabelMPSCapable: strconv.FormatBool(s.EffectiveMode() == devices.MPS && !anyMIG(d)),
	}
	addDriverLabels(l, d)
	if len(d.GPUs) == 0 {
		return l
	}
	l[devices.LabelGPUProduct] = d.Product
	l[devices.LabelGPUCount] = strconv.Itoa(len(d.GPUs))
	l[devices.LabelGPUMemory] = strconv.FormatInt(int64(d.GPUs[0].Memory), 10)
	l[devices.LabelMachine] = sanitise(f.MachineType, "unknown")
	addArchitectureLabels(l, d.Model, f)
	l[devices.LabelGPUReplicas] = "1"
	l[devices.LabelSharingStrategy] = "none"
	switch s.EffectiveMode() {
	case devices.TimeSlicing, devices.MPS:
		replicas, renamed := gpuReplicas(s)
		l[devices.LabelGPUReplicas] = strconv.Itoa(replicas)
		l[devices.LabelSharingStrategy] = string(s.EffectiveMode())
		if !renamed && replicas > 1 {
			l[devices.LabelGPUProduct] = d.Product + "-SHARED"
		}
	case devices.Fractional:
		l[devices.LabelGPUSharing] = string(devices.Fractional)
	}
	addMIGLabels(l, d, s, f)
	addNVLinkLabels(l, d)
	return l
}

// gpuReplicas is the replica count of whole GPUs (nvidia.com/gpu) under s, from its
// per-resource list when it has one, and whether they are advertised under another name.
func gpuReplicas(s devices.Sharing) (int, bool) {
	for _, r := range s.ReplicatedResources() {
		if r.Name == resources.NvidiaGPU {
			return r.Replicas, s.AdvertisedName(r) != resources.NvidiaGPU
		}
	}
	return 1, false
}

// addArchitectureLabels writes the compute capability and GFD's family derived from it
// (nothing when the capability is unknown, as GFD does).
func addArchitectureLabels(l map[string]string, m devices.Model, f Facts) {
	major, minor := f.ComputeMajor, f.ComputeMinor
	if major == 0 {
		major, minor = m.ComputeMajor, m.ComputeMinor
	}
	l[devices.LabelGPUFamily] = devices.FamilyOfComputeCapability(major, minor)
	if major == 0 {
		return
	}
	l[devices.LabelComputeMajor] = strconv.Itoa(major)
	l[devices.LabelComputeMinor] = strconv.Itoa(minor)
}

// addDriverLabels writes the driver and CUDA version labels ("535.129.03" -> 535, 129, 03),
// in GFD's old and new spellings.
func addDriverLabels(l map[string]string, d *Discovery) {
	if d.DriverVersion != "" {
		parts := strings.SplitN(d.DriverVersion, ".", 3)
		keys := [][2]string{{devices.LabelCUDADriverMajor, devices.LabelDriverVersionMajor}, {devices.LabelCUDADriverMinor, devices.LabelDriverVersionMinor},
			{devices.LabelCUDADriverRev, devices.LabelDriverVersionRevision}}
		for i, p := range parts {
			l[keys[i][0]], l[keys[i][1]] = p, p
		}
		l[devices.LabelDriverVersion] = d.DriverVersion
	}
	if d.CUDAMajor > 0 {
		l[devices.LabelCUDARuntimeMaj], l[devices.LabelRuntimeVersionMajor] = strconv.Itoa(d.CUDAMajor), strconv.Itoa(d.CUDAMajor)
		l[devices.LabelCUDARuntimeMin], l[devices.LabelRuntimeVersionMinor] = strconv.Itoa(d.CUDAMinor), strconv.Itoa(d.CUDAMinor)
		l[devices.LabelCUDARuntimeFull] = fmt.Sprintf("%d.%d", d.CUDAMajor, d.CUDAMinor)
	}
}

// migProfileCount is one MIG profile on the node: how many devices and their memory.
type migProfileCount struct {
	name   string
	count  int
	memory int64
}

// migProfiles lists the node's MIG profiles, sorted by name; memory is what discovery
// read for the device, else the catalog's NVML figure.
func migProfiles(d *Discovery) []migProfileCount {
	byName := map[string]*migProfileCount{}
	var out []migProfileCount
	var names []string
	for _, g := range d.GPUs {
		for _, m := range g.MIG {
			p := m.Instance.Profile
			if byName[p] == nil {
				byName[p] = &migProfileCount{name: p}
				names = append(names, p)
			}
			byName[p].count++
			byName[p].memory = int64(m.Memory)
			if prof, ok := d.Model.Profile(p); ok && m.Memory == 0 {
				byName[p].memory = int64(prof.MemoryMiB)
			}
		}
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, *byName[n])
	}
	return out
}

// addMIGLabels writes the strategy and, for MIG GPUs, GFD's per-strategy labels: under
// single the nvidia.com/gpu.* labels describe the MIG devices, under mixed each profile
// gets nvidia.com/mig-<profile>.* (profile in the Kubernetes spelling, "+" as ".").
func addMIGLabels(l map[string]string, d *Discovery, s devices.Sharing, f Facts) {
	profiles := migProfiles(d)
	if len(profiles) == 0 {
		return
	}
	strategy := s.EffectiveMIGStrategy()
	l[devices.LabelMIGStrategy] = string(strategy)
	if strategy == devices.MIGSingle && len(profiles) == 1 {
		p := profiles[0]
		l[devices.LabelGPUProduct] = devices.MIGProductLabel(d.Product, p.name)
		l[devices.LabelGPUCount] = strconv.Itoa(p.count)
		l[devices.LabelGPUMemory] = strconv.FormatInt(p.memory, 10)
		addMIGAttributes(l, func(a string) string { return "nvidia.com/gpu." + a }, d.Model, p.name, f)
		return
	}
	for _, p := range profiles {
		key := func(a string) string { return devices.MIGLabelKey(p.name, a) }
		l[key("count")] = strconv.Itoa(p.count)
		l[key("product")] = devices.MIGProductLabel(d.Product, p.name)
		l[key("replicas")], l[key("sharing-strategy")] = "1", "none"
		if r, ok := migReplicas(s, p.name); ok {
			l[key("replicas")], l[key("sharing-strategy")] = strconv.Itoa(r), string(s.EffectiveMode())
		}
		l[key("memory")] = strconv.FormatInt(p.memory, 10)
		addMIGAttributes(l, key, d.Model, p.name, f)
	}
}

// migReplicas is the replica count of a time-sliced MIG profile; false when the
// profile's devices are not replicated.
func migReplicas(s devices.Sharing, profile string) (int, bool) {
	for _, r := range s.ReplicatedResources() {
		if r.Name == resources.MIGResource(profile) {
			return r.Replicas, true
		}
	}
	return 0, false
}

// addMIGAttributes writes the slice counts the catalog knows and the multiprocessor and
// engine counts NVML reported.
func addMIGAttributes(l map[string]string, key func(string) string, m devices.Model, profile string, f Facts) {
	prof, ok := m.Profile(profile)
	a, has := f.MIG[profile]
	if ok {
		l[key("slices.gi")] = strconv.Itoa(prof.ComputeSlices)
		// Gantry creates one compute instance spanning each GPU instance.
		l[key("slices.ci")] = strconv.Itoa(prof.ComputeSlices)
	}
	if !has {
		return
	}
	if a.ComputeInstanceSlices > 0 {
		l[key("slices.ci")] = strconv.Itoa(a.ComputeInstanceSlices)
	}
	for suffix, v := range map[string]int{"multiprocessors": a.Multiprocessors, "engines.copy": a.CopyEngines,
		"engines.decoder": a.Decoders, "engines.encoder": a.Encoders, "engines.jpeg": a.JPEGDecoders, "engines.ofa": a.OFAs} {
		l[key(suffix)] = strconv.Itoa(v)
	}
}

func anyMIG(d *Discovery) bool {
	for _, g := range d.GPUs {
		if g.MIGEnabled || len(g.MIG) > 0 {
			return true
		}
	}
	return false
}

// sanitise makes a label value as GFD does: characters other than letters, digits,
// "-", "_", "." and spaces are dropped, runs of spaces become one "-"; the result is cut
// to 63 characters; empty gives def.
func sanitise(v, def string) string {
	kept := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == ' ':
			return r
		}
		return -1
	}, v)
	out := strings.Join(strings.Fields(kept), "-")
	if len(out) > 63 { // a label value's limit; GFD would write an invalid label
		out = strings.TrimRight(out[:63], "-_.")
	}
	if out == "" {
		return def
	}
	return out
}

// addNVLinkLabels writes the domain count and, when all domains have the same size,
// that size.
func addNVLinkLabels(l map[string]string, d *Discovery) {
	sizes := map[int]int{}
	for _, g := range d.GPUs {
		sizes[g.NVLinkDomain]++
	}
	l[devices.LabelNVLinkDomains] = strconv.Itoa(len(sizes))
	size := -1
	for _, n := range sizes {
		if size >= 0 && n != size {
			return
		}
		size = n
	}
	l[devices.LabelGPUsPerNVLinkDomain] = strconv.Itoa(size)
}

// SortedLabelKeys lists a label map's keys in order, for printing.
func SortedLabelKeys(l map[string]string) []string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
