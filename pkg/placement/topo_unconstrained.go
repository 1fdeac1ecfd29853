package placement

import "github.com/gantry-sched/gantry/pkg/api"

// placeUnconstrained places n pods with Kueue's podset-unconstrained-topology: no common
// domain, but packed tightly: the domains of the topology's narrowest listed level are
// filled in order of least estimated room first (small gaps before whole domains, as
// Kueue's least-free-capacity order does), each as far as it holds pods; nodes outside
// every domain come last.
func (p *setPlacer) placeUnconstrained(n int) ([]PodPlacement, *Diagnosis) {
	level := p.topology().Tiers()[0]
	out := make([]PodPlacement, 0, n)
	for _, d := range rankDomains(p.ov, p.ov.Domains(level), p.req, 1) {
		if len(out) == n {
			break
		}
		out = append(out, p.fill(d.Nodes, n-len(out))...)
	}
	if len(out) < n {
		out = append(out, p.fill(nil, n-len(out))...)
	}
	if len(out) < n {
		d := p.diagnose(nil)
		d.Placed = len(out)
		return nil, d
	}
	return out, nil
}

// fill places up to n pods on nodes (nil: every node), one at a time on the best-scored
// node, and stops at the first that does not fit.
func (p *setPlacer) fill(nodes []int, n int) []PodPlacement {
	c := newChooser(p.ov, nodes, p.req, p.scorers, p.rnd, p.fits)
	defer p.fits.giveBack(c)
	var out []PodPlacement
	for len(out) < n {
		pp, ok := assumeBest(p.ov, c, p.w.ID(), p.ps.Name, p.next)
		if !ok {
			break
		}
		p.next++
		out = append(out, pp)
	}
	return out
}

// unconstrained says whether the pod set asks for unconstrained placement alone (with a
// slice constraint it is a slice-only request, placed as such).
func unconstrained(t *api.TopologyRequest) bool {
	return t != nil && t.Mode == api.TopologyUnconstrained && t.SliceLevel == ""
}
