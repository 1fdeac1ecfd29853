package admission

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Short reports, by a cheap bound, that Assign would answer NoFit for wl in cq now: cq
// cannot preempt, and some pod set requests more of a resource cq covers than every
// flavor cq lists for it has available. False says nothing (ask Assign). The scheduler
// asks it before waking quota-parked workloads: after a finish most of them are still
// short, and this costs a few lookups where Assign rates every flavor.
func (q *Quota) Short(wl *api.Workload, cq string) bool {
	n, ok := q.s.cqID(cq)
	if !ok || wl == nil || q.preemptionPossible(n) {
		return false
	}
	cover := q.s.covered[n]
	for i := range wl.PodSets {
		ps := &wl.PodSets[i]
		for r, per := range ps.Requests {
			g, covered := cover[r]
			if !covered || per <= 0 || r == resources.GPUMilli || q.s.excluded(r) {
				continue // converted, uncovered or ignored: Assign knows
			}
			if !q.offers(n, g, r, resources.SatMul(per, int64(ps.Count))) {
				return true
			}
		}
	}
	return false
}

// offers reports whether some flavor of group g of ClusterQueue n has amount of r
// available now (Assign's rating is Preempt or worse for every flavor otherwise).
func (q *Quota) offers(n nodeID, g int, r resources.Name, amount resources.Amount) bool {
	for _, fq := range q.s.nodes[n].cq.ResourceGroups[g].Flavors {
		if f, ok := q.s.frIndex[FlavorResource{fq.Name, r}]; !ok || q.available(n, f) >= amount {
			return true // a flavor without the cell is rated by Assign
		}
	}
	return false
}
