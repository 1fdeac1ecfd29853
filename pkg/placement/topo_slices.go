package placement

import (
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// innerSlices lists the used inner slice layers of a request, coarsest first.
func innerSlices(t *api.TopologyRequest) []api.SliceLayer {
	var out []api.SliceLayer
	for _, l := range t.InnerSlices {
		if l.Size > 0 {
			out = append(out, l)
		}
	}
	return out
}

// placeLayers places n pods on nodes honouring the inner slice layers of Kueue's
// multi-layer constraint: every layers[0].Size pods share one layers[0].Level domain,
// and so on down; with no layer left the pods go anywhere on nodes. On failure the
// caller undoes the overlay.
func (p *setPlacer) placeLayers(nodes []int, n int, layers []api.SliceLayer) ([]PodPlacement, *Diagnosis) {
	if len(layers) == 0 {
		return p.placeIn(nodes, n)
	}
	l := layers[0]
	parent := cluster.Domain{Nodes: nodes}
	var out []PodPlacement
	for left := n; left > 0; {
		size := min(left, int(l.Size))
		got, ok := p.placeOneSlice(p.ov.Base().SubDomains(parent, l.Level), size, layers[1:])
		if !ok {
			d := p.diagnose(nodes)
			d.Topology = fmt.Sprintf("no %s domain has room for a slice of %d pods", l.Level, size)
			return nil, d
		}
		out = append(out, got...)
		left -= size
	}
	return out, nil
}

// placeOneSlice puts size pods in one of domains, best fit first.
func (p *setPlacer) placeOneSlice(domains []cluster.Domain, size int, inner []api.SliceLayer) ([]PodPlacement, bool) {
	for _, d := range rankDomains(p.ov, domains, p.req, size) {
		mark, next := p.ov.Mark(), p.next
		if pp, diag := p.placeLayers(d.Nodes, size, inner); diag == nil {
			return pp, true
		}
		p.ov.Undo(mark)
		p.next = next
	}
	return nil, false
}

// sliceOrderProblem checks what Kueue checks when it schedules a multi-layer request:
// every inner layer is a level of the topology strictly narrower than the layer above.
// "" when the request is fine (or has no inner layer).
func sliceOrderProblem(topo cluster.Topology, t *api.TopologyRequest) string {
	prev := t.SliceLevel
	for _, l := range innerSlices(t) {
		i, j := slices.Index(topo.Levels, prev), slices.Index(topo.Levels, l.Level)
		if i < 0 || j < 0 {
			return fmt.Sprintf("slice layers %s and %s must both be levels of topology %q (%v)", prev, l.Level, topo.Name, topo.Levels)
		}
		if j <= i {
			return fmt.Sprintf("slice layer %s must be a narrower level than %s in topology %q", l.Level, prev, topo.Name)
		}
		prev = l.Level
	}
	return ""
}
