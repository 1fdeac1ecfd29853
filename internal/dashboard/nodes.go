package dashboard

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

// nodesPage is the node × GPU map: a row per node, a card per GPU, the GPU drawn as a
// bar cut into its devices at their share, each coloured by the workload holding it.
type nodesPage struct {
	Nodes   []nodeRow
	Holders []holderSwatch
	// Devices counts what the map draws, by kind, for the legend line.
	Whole, MIG, Replicas, Free int
}

type nodeRow struct {
	Name, Pool, CapacityType string
	Ready                    bool
	Allocated, Capacity      string // GPUs
	GPUs                     []gpuCell
}

type gpuCell struct {
	Index          int
	Model, Mode    string
	Healthy        bool
	Allocated      string
	Devices        []deviceCell
	UnsetX, UnsetW int64 // the part of the GPU no device covers (MIG slices not laid out)
	Title          string
}

// deviceCell is one device's rectangle: X and W in pixels of gpuBarW.
type deviceCell struct {
	ID, Profile, Holder, Kind string
	Share                     string
	X, W                      int64
	Fill, Label, Title        string
	Free                      bool
}

type holderSwatch struct {
	Name, Fill string
	Devices    int
}

// gpuBarW is a GPU bar's width in pixels (the SVG's viewBox); small enough that eight
// GPUs of a node fit on one line of an 800px window.
const gpuBarW = 150

// holderPalette colours the holders, assigned in name order and reused past twelve.
func holderColour(i int) string {
	const palette = "#4e79a7#f28e2b#e15759#76b7b2#59a14f#edc948#b07aa1#ff9da7#9c755f#86bcb6#d37295#a0cbe8"
	k := i % 12
	return palette[k*7 : k*7+7]
}

func buildNodes(s view.Snapshot) nodesPage {
	var p nodesPage
	fills := holderFills(s.Nodes)
	count := map[string]int{}
	for _, n := range s.Nodes {
		row := nodeRow{Name: n.Name, Pool: n.Pool, CapacityType: n.CapacityType, Ready: n.Ready}
		var alloc resources.MilliGPU
		for _, g := range n.GPUs {
			alloc += g.Allocated
			cell := gpuCellOf(n.Name, g, fills)
			for _, d := range cell.Devices {
				p.countDevice(d)
				if d.Holder != "" {
					count[d.Holder]++
				}
			}
			row.GPUs = append(row.GPUs, cell)
		}
		row.Allocated = formatGPU(alloc)
		row.Capacity = strconv.Itoa(len(n.GPUs))
		p.Nodes = append(p.Nodes, row)
	}
	for _, h := range sortedKeys(fills) {
		p.Holders = append(p.Holders, holderSwatch{Name: h, Fill: fills[h], Devices: count[h]})
	}
	return p
}

func (p *nodesPage) countDevice(d deviceCell) {
	if d.Free {
		p.Free++
	}
	switch d.Kind {
	case "mig":
		p.MIG++
	case "replica":
		p.Replicas++
	default:
		p.Whole++
	}
}

// holderFills gives every holder of a device a colour, in name order.
func holderFills(nodes []view.Node) map[string]string {
	set := map[string]string{}
	for _, n := range nodes {
		for _, g := range n.GPUs {
			for _, d := range g.Devices {
				if d.Holder != "" {
					set[d.Holder] = ""
				}
			}
		}
	}
	for i, h := range sortedKeys(set) {
		set[h] = holderColour(i)
	}
	return set
}

func gpuCellOf(node string, g view.GPU, fills map[string]string) gpuCell {
	c := gpuCell{Index: g.Index, Model: g.Model, Mode: g.Mode, Healthy: g.Healthy, Allocated: formatGPU(g.Allocated)}
	c.Title = node + " GPU " + strconv.Itoa(g.Index) + ": " + g.Model + ", " + g.Mode + ", " + formatGPU(g.Allocated) + " of 1 allocated"
	if !g.Healthy {
		c.Title += ", unhealthy"
	}
	var cum resources.MilliGPU
	for _, d := range g.Devices {
		share := min(d.Share, resources.MilliPerGPU-cum)
		x0 := int64(cum) * gpuBarW / int64(resources.MilliPerGPU)
		cum += max(share, 0)
		x1 := int64(cum) * gpuBarW / int64(resources.MilliPerGPU)
		c.Devices = append(c.Devices, deviceCellOf(d, x0, max(x1-x0, 1), fills))
	}
	switch gap := resources.MilliPerGPU - cum; {
	case gap <= 0:
	case gap < roundingGap && len(c.Devices) > 0:
		// Seven 1g slices are 7 × 142 = 994 milli: the rest is rounding, not a gap.
		last := &c.Devices[len(c.Devices)-1]
		last.W = gpuBarW - last.X
	default:
		c.UnsetX = int64(cum) * gpuBarW / int64(resources.MilliPerGPU)
		c.UnsetW = gpuBarW - c.UnsetX
	}
	return c
}

// roundingGap is the most of a GPU its devices' shares may leave uncovered through
// rounding (a seventh is 142 milli, so seven slices leave 6).
const roundingGap resources.MilliGPU = 10

func deviceCellOf(d view.Device, x, w int64, fills map[string]string) deviceCell {
	c := deviceCell{ID: d.ID, Profile: d.Profile, Holder: d.Holder, Share: formatGPU(d.Share), X: x, W: w}
	switch {
	case d.Profile != "":
		c.Kind = "mig"
	case d.Share < resources.MilliPerGPU:
		c.Kind = "replica"
	default:
		c.Kind = "whole"
	}
	holder := d.Holder
	if holder == "" {
		c.Free, c.Fill, holder = true, "#ffffff", "free"
	} else {
		c.Fill = fills[d.Holder]
	}
	c.Title = d.ID + " (" + c.Kind
	if d.Profile != "" {
		c.Title += " " + d.Profile
	}
	c.Title += ", " + c.Share + " GPU): " + holder
	c.Label = deviceLabel(d, w)
	return c
}

// deviceLabel is the text drawn in a device's rectangle when it fits: a MIG device's
// profile (its slice count alone when narrow); nothing for other devices.
func deviceLabel(d view.Device, w int64) string {
	if d.Profile == "" {
		return ""
	}
	if w >= int64(len(d.Profile))*6+4 {
		return d.Profile
	}
	short, _, _ := strings.Cut(d.Profile, ".")
	if w >= int64(len(short))*6+2 {
		return short
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
