package placement

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// sharedClaimsOf lists the shared claims ps's pods name, sorted.
func sharedClaimsOf(ps *api.PodSet, namespace string) []string {
	return SharedClaims(ps, namespace)
}

// SharedClaims lists the shared claims (ResourceClaims named directly, by
// "namespace/name") the pods of ps name, sorted; nil when none.
func SharedClaims(ps *api.PodSet, namespace string) []string {
	var out []string
	for _, c := range ps.Claims {
		if c.Shared() {
			out = append(out, namespace+"/"+c.ResourceClaimName)
		}
	}
	sort.Strings(out)
	return out
}

// placeShared places the n gang pods of a set whose pods name shared claims. A shared
// claim allocated already (by this workload or another: its holder is on the overlay)
// keeps every pod naming it on its node, and they take nothing more for it. Otherwise
// the first pod takes the devices of the claims not allocated yet, which then pass to
// the claims' holders (AssumeWithClaims), and every other pod goes to the same node with
// only its own claims' devices. The set's extra pods follow them there (scope).
func (p *setPlacer) placeShared(n int, opts Options) ([]PodPlacement, *Diagnosis) {
	if n == 0 {
		return nil, nil
	}
	ns := p.w.Namespace
	shared := sharedClaimsOf(p.ps, ns)
	node, held, err := heldAt(p.ov, shared)
	if err != nil {
		return nil, &Diagnosis{Workload: p.w.ID(), PodSet: p.ps.Name, TotalNodes: p.ov.NumNodes(), Topology: err.Error()}
	}
	all, err := opts.Claims.Compile(p.ps, ns)
	if err != nil {
		return nil, p.errDiagnosis(err)
	}
	first, err := opts.Claims.compileWithout(p.ps, ns, held)
	if err != nil {
		return nil, p.errDiagnosis(err)
	}
	var scope []int
	if node >= 0 {
		scope = []int{node}
	}
	p.req = claimPodRequest(p.ps, p.fc, all, first)
	mark := p.ov.Mark()
	out, d := p.placeIn(scope, 1)
	if d != nil {
		return nil, d
	}
	if len(held) < len(shared) {
		if err := p.handOver(opts.Claims, out[0], mark); err != nil {
			return nil, p.errDiagnosis(err)
		}
	}
	node, _ = p.ov.NodeIndex(out[0].Node)
	rest, err := opts.Claims.compileWithout(p.ps, ns, shared)
	if err != nil {
		return nil, p.errDiagnosis(err)
	}
	p.req, p.scope = claimPodRequest(p.ps, p.fc, all, rest), []int{node}
	more, d := p.placeIn(p.scope, n-1)
	if d != nil {
		d.Placed++
		return nil, d
	}
	return append(out, more...), nil
}

// handOver assumes again the pod pp, placed with every device of its slot since mark,
// so that the devices of the shared claims it allocates go to their holders. pp keeps
// the whole slot as its placement: the binding names every device its claims get.
func (p *setPlacer) handOver(claims *DeviceClaims, pp PodPlacement, mark cluster.Mark) error {
	ref := cluster.PodRef{Workload: p.w.ID(), PodSet: pp.PodSet, Index: pp.Index}
	bp, ok := p.ov.Pod(ref)
	if !ok {
		return fmt.Errorf("pod %s: placed but not on the overlay", ref)
	}
	node, _ := p.ov.NodeIndex(pp.Node)
	p.ov.Undo(mark)
	return AssumeWithClaims(p.ov, claims, p.w, p.ps, ref, node, bp.Requests, bp.Devices)
}

// errDiagnosis is a failed placement of the set for a reason that is not a node's.
func (p *setPlacer) errDiagnosis(err error) *Diagnosis {
	return &Diagnosis{Workload: p.w.ID(), PodSet: p.ps.Name, TotalNodes: p.ov.NumNodes(), Err: err.Error()}
}
