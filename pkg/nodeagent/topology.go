package nodeagent

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// assignTopology sets each GPU's NVLinkDomain (connected components of the graph whose
// nodes are PCI addresses, GPUs and NVSwitches alike, and whose edges are active NVLink
// links; numbered in order of their lowest GPU index) and PCIeSwitch.
func assignTopology(gpus []GPUInfo, handles []nvml.Device) error {
	uf := unionFind{}
	for i, h := range handles {
		uf.add(gpus[i].BusID)
		for l := 0; l < nvml.NVLINK_MAX_LINKS; l++ {
			state, r := h.GetNvLinkState(l)
			if r == nvml.ERROR_INVALID_ARGUMENT || r == nvml.ERROR_NOT_SUPPORTED {
				continue // the GPU has fewer links, or none
			}
			if r != nvml.SUCCESS {
				return nvmlError(r, "GPU %d: reading NVLink %d state", i, l)
			}
			if state != nvml.FEATURE_ENABLED {
				continue
			}
			remote, r := h.GetNvLinkRemotePciInfo(l)
			if r != nvml.SUCCESS {
				return nvmlError(r, "GPU %d: reading NVLink %d remote", i, l)
			}
			uf.union(gpus[i].BusID, normalizeBusID(busID(remote)))
		}
	}
	domains := map[string]int{}
	switches := map[string]int{}
	for i := range gpus {
		root := uf.find(gpus[i].BusID)
		if _, ok := domains[root]; !ok {
			domains[root] = len(domains)
		}
		gpus[i].NVLinkDomain = domains[root]
		sw := pcieSwitchKey(gpus[i].BusID)
		if _, ok := switches[sw]; !ok {
			switches[sw] = len(switches)
		}
		gpus[i].PCIeSwitch = switches[sw]
	}
	return nil
}

// busID is the PCI address in p, a NUL-terminated C string.
func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// normalizeBusID turns NVML's "00000000:07:00.0" and the short "0000:07:00.0" into one
// lower-case form with a four-digit domain. Unparseable input is kept, lower-cased.
func normalizeBusID(s string) string {
	parts := strings.Split(strings.ToLower(strings.TrimSpace(s)), ":")
	if len(parts) != 3 {
		return strings.ToLower(s)
	}
	dom, err1 := strconv.ParseUint(parts[0], 16, 32)
	bus, err2 := strconv.ParseUint(parts[1], 16, 8)
	if err1 != nil || err2 != nil {
		return strings.ToLower(s)
	}
	return fmt.Sprintf("%04x:%02x:%s", dom, bus, parts[2])
}

// pcieSwitchKey groups GPUs behind one PCIe switch by their bus number's upper three
// bits: firmware gives each switch's downstream ports a window of 32 buses on the HGX
// and DGX boards (DGX A100: 07/0F, 47/4E, 87/90, B7/BD). A heuristic: a node agent
// with sysfs access could read the parent bridge instead.
func pcieSwitchKey(busID string) string {
	parts := strings.Split(busID, ":")
	if len(parts) != 3 {
		return busID
	}
	bus, err := strconv.ParseUint(parts[1], 16, 8)
	if err != nil {
		return busID
	}
	return fmt.Sprintf("%s:%d", parts[0], bus>>5)
}

// unionFind is a disjoint-set forest over string keys.
type unionFind map[string]string

func (u unionFind) add(k string) {
	if _, ok := u[k]; !ok {
		u[k] = k
	}
}

func (u unionFind) find(k string) string {
	u.add(k)
	for u[k] != k {
		u[k] = u[u[k]] // path halving
		k = u[k]
	}
	return k
}

// union joins the sets of a and b; the smaller key becomes the root, so results do
// not depend on the order links are read in.
func (u unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	u[rb] = ra
}
