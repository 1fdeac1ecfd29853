package placement

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Candidate search: the nodes worth evaluating for a pod are those the cluster's free
// index says have enough of the pod's GPU resource free, among those that pass the
// static checks (a set the snapshot remembers per pod constraints). Every node left out
// would fail cheapFits, the static checks or the device fit anyway, so a chooser built
// over the candidates has the same feasible nodes, in the same order, as one built over
// every node: scores, ties and the random draws that break them do not change.

// candidates sets dst to the nodes that may hold one pod of p now. byModel narrows the
// query to the request's GPU models (ModelConstraint); the domain estimates, which count
// GPUs of any model, pass false.
func candidates(ov *cluster.Overlay, p *PodRequest, byModel bool, dst *cluster.NodeSet) {
	g := p.GPU
	var models []devices.ModelID
	if byModel {
		models = g.ModelConstraint
	}
	switch {
	case g.Units > 0:
		// The only kind predictWhole guesses for, so the only one queried when a
		// hand-built request mixes kinds: a node it would guess on must stay.
		ov.FreeAtLeast(dst, resources.NvidiaGPU, g.Units, models)
	case g.IsFraction():
		ov.FreeAtLeast(dst, "", 0, nil) // shares are not indexed: every node
	case g.Shared > 0:
		ov.FreeAtLeast(dst, resources.NvidiaGPUShared, g.Shared, models)
	case len(g.MIG) > 0:
		ov.FreeAtLeast(dst, resources.MIGResource(g.MIG[0].Profile), g.MIG[0].Count, models)
		var more cluster.NodeSet
		for _, m := range g.MIG[1:] {
			ov.FreeAtLeast(&more, resources.MIGResource(m.Profile), m.Count, models)
			dst.And(&more)
		}
	default:
		ov.FreeAtLeast(dst, "", 0, nil) // no GPU: every node
	}
	dst.And(staticSet(ov, p))
}

// staticSet is the nodes that pass p's static checks (cordon, readiness, taints,
// selector, affinity, flavor labels), remembered by the snapshot under p's static key.
func staticSet(ov *cluster.Overlay, p *PodRequest) *cluster.NodeSet {
	var scratch [1]Rejection
	return ov.StaticSet(p.static, func(n *cluster.Node) bool {
		return len(staticCheck(n, p, false, scratch[:0])) == 0
	})
}

// staticKeyOf renders everything staticCheck reads of p, so equal keys mean equal
// answers on every node.
func staticKeyOf(p *PodRequest) string {
	var b strings.Builder
	b.WriteString("static/sel:")
	for _, l := range p.selector {
		fmt.Fprintf(&b, "%q=%q,", l.key, l.value)
	}
	b.WriteString("/flavor:")
	for _, l := range p.flavor {
		fmt.Fprintf(&b, "%q=%q,", l.key, l.value)
	}
	b.WriteString("/tol:")
	for _, t := range p.Tolerations {
		fmt.Fprintf(&b, "%q,%q,%q,%q;", t.Key, t.Operator, t.Value, t.Effect)
	}
	if p.Affinity != nil {
		fmt.Fprintf(&b, "/aff:%#v", *p.Affinity)
	}
	return b.String()
}
