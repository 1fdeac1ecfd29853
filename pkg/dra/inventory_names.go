package dra

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// Device names follow NVIDIA's GPU DRA driver (k8s-dra-driver-gpu), so a claim, a
// selector or an allocation written against that driver reads the same here:
//
//	whole GPU:     gpu-<minor>                                  gpu-3
//	MIG instance:  gpu-<minor>-mig-<profile>-<giProfileID>-<start>  gpu-3-mig-1g10gb-19-4
//
// <profile> is the MIG profile with its dots dropped and what is not [a-z0-9-] turned
// into "-" ("1g.10gb+me" -> "1g10gb-me"); <giProfileID> is NVML's GPU-instance profile
// ID (nvidia-smi mig -lgip), which keeps "+me" and "-me" variants apart. Gantry's GPU
// index stands for the minor number. Driver releases before 25.8 wrote MIG names as
// gpu-<minor>-mig-<giProfileID>-<start>-<size>; both forms are read, and neither is read
// for the profile: the device's profile attribute says that, the name only the GPU and
// the start slot.
const (
	gpuNamePrefix = "gpu-"
	migNameInfix  = "-mig-"
)

// gpuName is a whole GPU's device name.
func gpuName(index int) string { return gpuNamePrefix + strconv.Itoa(index) }

// migName is a MIG instance's device name on a GPU of model m.
func migName(index int, m devices.Model, in devices.Instance) string {
	return fmt.Sprintf("%s%d%s%s-%d-%d", gpuNamePrefix, index, migNameInfix, profileNamePart(in.Profile),
		giProfileID(m, in.Profile), in.Start)
}

// profileNamePart is the profile as NVIDIA's names spell it: lower case, no dots,
// anything outside [a-z0-9-] a dash, no dash at either end.
func profileNamePart(profile string) string {
	p := strings.ToLower(strings.ReplaceAll(profile, ".", ""))
	p = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			return r
		}
		return '-'
	}, p)
	return strings.Trim(p, "-")
}

// parsedName is what a device name says on its own.
type parsedName struct {
	gpu   int
	mig   bool
	start int
}

// parseDeviceName reads a driver device name; ok is false for names neither form has
// (another kind of device, such as NVIDIA's gpu-vfio-<n>).
func parseDeviceName(name string) (parsedName, bool) {
	rest, ok := strings.CutPrefix(name, gpuNamePrefix)
	if !ok {
		return parsedName{}, false
	}
	head, tail, isMIG := strings.Cut(rest, migNameInfix)
	gpu, ok := atoi(head)
	if !ok || !isMIG {
		return parsedName{gpu: gpu}, ok && !isMIG
	}
	// tail is <profile>-<giProfileID>-<start>, or <giProfileID>-<start>-<size> in the
	// old form; a profile part always holds a "g" ("1g10gb"), a profile ID never.
	i := strings.LastIndexByte(tail, '-')
	j := strings.LastIndexByte(tail[:max(i, 0)], '-')
	if i < 0 || j <= 0 {
		return parsedName{}, false
	}
	first, second, third := tail[:j], tail[j+1:i], tail[i+1:]
	_, okSecond := atoi(second)
	_, okThird := atoi(third)
	start := third
	if isDigits(first) {
		start = second
	}
	s, okStart := atoi(start)
	return parsedName{gpu: gpu, mig: true, start: s}, okSecond && okThird && okStart
}

// atoi reads a non-negative decimal of digits only.
func atoi(s string) (int, bool) {
	if !isDigits(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// giShape is what fixes a GPU-instance profile's NVML ID: the GPU's memory slices, the
// profile's compute and memory slices and its attribute suffix.
type giShape struct {
	gpuSlices, compute, memory int
	suffix                     string
}

// knownGIProfileID is NVML's GPU-instance profile ID as nvidia-smi mig -lgip lists
// it: the same on every 8-slice GPU (A100, H100, H200, B200, ...) and on every 4-slice
// one (A30, RTX PRO 6000 Blackwell) whatever the memory sizes.
func knownGIProfileID(s giShape) (int, bool) {
	type key = giShape
	switch s {
	case key{8, 1, 1, ""}:
		return 19, true
	case key{8, 1, 1, "+me"}:
		return 20, true
	case key{8, 1, 2, ""}:
		return 15, true
	case key{8, 2, 2, ""}:
		return 14, true
	case key{8, 3, 4, ""}:
		return 9, true
	case key{8, 4, 4, ""}:
		return 5, true
	case key{8, 7, 8, ""}, key{4, 4, 4, ""}:
		return 0, true
	case key{4, 1, 1, ""}:
		return 14, true
	case key{4, 1, 1, "+me"}:
		return 21, true
	case key{4, 2, 2, ""}:
		return 5, true
	case key{4, 2, 2, "+me"}:
		return 6, true
	}
	return knownBlackwellGIProfileID(s)
}

// knownBlackwellGIProfileID covers the attribute variants Blackwell brought (+gfx,
// -me, +me.all), on the 4-slice RTX PRO 6000.
func knownBlackwellGIProfileID(s giShape) (int, bool) {
	type key = giShape
	switch s {
	case key{4, 1, 1, "+gfx"}:
		return 47, true
	case key{4, 2, 2, "+gfx"}:
		return 35, true
	case key{4, 4, 4, "+gfx"}:
		return 32, true
	case key{4, 1, 1, "-me"}:
		return 67, true
	case key{4, 2, 2, "-me"}:
		return 66, true
	case key{4, 1, 1, "+me.all"}:
		return 65, true
	case key{4, 2, 2, "+me.all"}:
		return 64, true
	}
	return 0, false
}

// unknownGIProfileBase numbers profiles the table lacks (none of the catalog's; a
// test keeps it so): past every NVML ID, by the profile's position in its model, so
// names stay unique on the node.
const unknownGIProfileBase = 100

// giProfileID is the NVML GPU-instance profile ID of profile on a model-m GPU.
func giProfileID(m devices.Model, profile string) int {
	p, ok := m.Profile(profile)
	if !ok || m.MIG == nil {
		return unknownGIProfileBase
	}
	if id, ok := knownGIProfileID(giShape{m.MIG.MemorySlices, p.ComputeSlices, p.MemorySlices, profileSuffix(p)}); ok {
		return id
	}
	for i, q := range m.MIG.Profiles {
		if q.Name == p.Name {
			return unknownGIProfileBase + i
		}
	}
	return unknownGIProfileBase
}

// profileSuffix is the attribute suffix of a catalog profile's name.
func profileSuffix(p devices.Profile) string {
	switch {
	case p.AllMedia:
		return "+me.all"
	case p.MediaExtensions:
		return "+me"
	case p.Graphics:
		return "+gfx"
	case p.NoMedia:
		return "-me"
	}
	return ""
}
