package placement

import (
	"fmt"
	"strconv"

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
	// strconv quotes as %q does, without fmt's reflection: a request is built per
	// placement, and at fleet size this rendering was a visible part of it.
	b := make([]byte, 0, 64)
	b = append(b, "static/sel:"...)
	for _, l := range p.selector {
		b = appendQuoted(b, '=', l.key, l.value)
	}
	b = append(b, "/flavor:"...)
	for _, l := range p.flavor {
		b = appendQuoted(b, '=', l.key, l.value)
	}
	b = append(b, "/tol:"...)
	for _, t := range p.Tolerations {
		b = appendQuoted(b, ',', t.Key, string(t.Operator), t.Value, string(t.Effect))
		b[len(b)-1] = ';'
	}
	if p.Affinity != nil {
		b = fmt.Appendf(b, "/aff:%#v", *p.Affinity)
	}
	return string(b)
}

// appendQuoted appends the fields quoted, sep between them and ',' after the last.
func appendQuoted(b []byte, sep byte, fields ...string) []byte {
	for k, f := range fields {
		if k > 0 {
			b = append(b, sep)
		}
		b = strconv.AppendQuote(b, f)
	}
	return append(b, ',')
}
