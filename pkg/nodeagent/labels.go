package nodeagent

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// Label keys the agent writes. The nvidia.com ones follow GPU Feature Discovery; the
// gantry.dev ones are read by pkg/cluster.
const (
	LabelGPUProduct      = "nvidia.com/gpu.product"
	LabelGPUCount        = "nvidia.com/gpu.count"
	LabelGPUMemory       = "nvidia.com/gpu.memory"
	LabelGPUFamily       = "nvidia.com/gpu.family"
	LabelGPUReplicas     = "nvidia.com/gpu.replicas"
	LabelSharingStrategy = "nvidia.com/gpu.sharing-strategy"
	LabelMIGCapable      = "nvidia.com/mig.capable"
	LabelMIGStrategy     = "nvidia.com/mig.strategy"
	LabelMIGConfig       = "nvidia.com/mig.config"
	LabelCUDADriverMajor = "nvidia.com/cuda.driver.major"
	LabelCUDADriverMinor = "nvidia.com/cuda.driver.minor"
	LabelCUDADriverRev   = "nvidia.com/cuda.driver.rev"
	LabelDriverVersion   = "nvidia.com/cuda.driver-version.full"
	LabelCUDARuntimeMaj  = "nvidia.com/cuda.runtime.major"
	LabelCUDARuntimeMin  = "nvidia.com/cuda.runtime.minor"
	LabelCUDARuntimeFull = "nvidia.com/cuda.runtime-version.full"

	// LabelNVLinkDomains is how many NVLink domains the node's GPUs form;
	// LabelGPUsPerNVLinkDomain their size when all are equal (pkg/cluster reads it).
	LabelNVLinkDomains       = "gantry.dev/nvlink-domains"
	LabelGPUsPerNVLinkDomain = "gantry.dev/gpus-per-nvlink-domain"
	// LabelGPUSharing marks fractional sharing, Gantry's own mode.
	LabelGPUSharing = "gantry.dev/gpu-sharing"
)

// Labels returns the node labels for a discovery under sharing s, as GFD would write
// them (its MIG "single" strategy renames the product and counts MIG devices; "mixed"
// adds per-profile labels) plus Gantry's NVLink-domain labels.
func Labels(d *Discovery, s devices.Sharing) map[string]string {
	l := map[string]string{
		LabelMIGCapable: strconv.FormatBool(d.MIGCapable),
	}
	addDriverLabels(l, d)
	if len(d.GPUs) == 0 {
		return l
	}
	l[LabelGPUProduct] = d.Product
	l[LabelGPUCount] = strconv.Itoa(len(d.GPUs))
	l[LabelGPUMemory] = strconv.FormatInt(int64(d.GPUs[0].Memory), 10)
	l[LabelGPUFamily] = strings.ToLower(d.Model.Family)
	l[LabelGPUReplicas] = "1"
	l[LabelSharingStrategy] = "none"
	switch s.EffectiveMode() {
	case devices.TimeSlicing, devices.MPS:
		l[LabelGPUReplicas] = strconv.Itoa(s.Replicas)
		l[LabelSharingStrategy] = string(s.EffectiveMode())
		if !s.RenameByDefault && s.Replicas > 1 {
			l[LabelGPUProduct] = d.Product + "-SHARED"
		}
	case devices.Fractional:
		l[LabelGPUSharing] = string(devices.Fractional)
	}
	addMIGLabels(l, d, s)
	addNVLinkLabels(l, d)
	return l
}

// addDriverLabels writes the driver and CUDA version labels ("535.129.03" -> 535, 129, 03).
func addDriverLabels(l map[string]string, d *Discovery) {
	if d.DriverVersion != "" {
		parts := strings.SplitN(d.DriverVersion, ".", 3)
		keys := []string{LabelCUDADriverMajor, LabelCUDADriverMinor, LabelCUDADriverRev}
		for i, p := range parts {
			l[keys[i]] = p
		}
		l[LabelDriverVersion] = d.DriverVersion
	}
	if d.CUDAMajor > 0 {
		l[LabelCUDARuntimeMaj] = strconv.Itoa(d.CUDAMajor)
		l[LabelCUDARuntimeMin] = strconv.Itoa(d.CUDAMinor)
		l[LabelCUDARuntimeFull] = fmt.Sprintf("%d.%d", d.CUDAMajor, d.CUDAMinor)
	}
}

// addMIGLabels writes the strategy and, for MIG GPUs, GFD's per-strategy labels.
func addMIGLabels(l map[string]string, d *Discovery, s devices.Sharing) {
	counts := map[string]int{}
	memory := map[string]int64{}
	var profiles []string
	for _, g := range d.GPUs {
		for _, m := range g.MIG {
			p := m.Instance.Profile
			if counts[p] == 0 {
				profiles = append(profiles, p)
			}
			counts[p]++
			memory[p] = int64(m.Memory)
		}
	}
	if len(profiles) == 0 {
		return
	}
	sort.Strings(profiles)
	strategy := s.EffectiveMIGStrategy()
	l[LabelMIGStrategy] = string(strategy)
	if strategy == devices.MIGSingle && len(profiles) == 1 {
		p := profiles[0]
		l[LabelGPUProduct] = d.Product + "-MIG-" + p
		l[LabelGPUCount] = strconv.Itoa(counts[p])
		l[LabelGPUMemory] = strconv.FormatInt(memory[p], 10)
		return
	}
	for _, p := range profiles {
		l["nvidia.com/mig-"+p+".count"] = strconv.Itoa(counts[p])
		l["nvidia.com/mig-"+p+".memory"] = strconv.FormatInt(memory[p], 10)
		if prof, ok := d.Model.Profile(p); ok {
			l["nvidia.com/mig-"+p+".slices.gi"] = strconv.Itoa(prof.ComputeSlices)
		}
	}
}

// addNVLinkLabels writes the domain count and, when all domains have the same size,
// that size.
func addNVLinkLabels(l map[string]string, d *Discovery) {
	sizes := map[int]int{}
	for _, g := range d.GPUs {
		sizes[g.NVLinkDomain]++
	}
	l[LabelNVLinkDomains] = strconv.Itoa(len(sizes))
	size := -1
	for _, n := range sizes {
		if size >= 0 && n != size {
			return
		}
		size = n
	}
	l[LabelGPUsPerNVLinkDomain] = strconv.Itoa(size)
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
