package manifest

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// volcanoAmounts is what one Queue's spec states, parsed once (each bad quantity is
// reported once, at its field).
type volcanoAmounts struct {
	deserved, guarantee, capability resources.Vector
	// names are the resources the spec names anywhere, sorted; none for a weight-only queue.
	names []resources.Name
	// unparsed are the deserved or guarantee resources whose quantity was reported bad:
	// they count as stated, so that no weight share (and no second error) is derived.
	unparsed map[resources.Name]bool
}

func parseVolcanoAmounts(q volcanoQueue) volcanoAmounts {
	s := q.in.Spec
	a := volcanoAmounts{unparsed: map[resources.Name]bool{}}
	a.deserved = a.parse(s.Deserved, "spec.deserved", true, q.c)
	a.guarantee = a.parse(s.Guarantee.Resource, "spec.guarantee.resource", true, q.c)
	a.capability = a.parse(s.Capability, "spec.capability", false, q.c)
	seen := map[resources.Name]bool{}
	for _, l := range []corev1.ResourceList{s.Deserved, s.Capability, s.Guarantee.Resource} {
		for n := range l {
			if !seen[resources.Name(n)] {
				seen[resources.Name(n)] = true
				a.names = append(a.names, resources.Name(n))
			}
		}
	}
	sort.Slice(a.names, func(i, j int) bool { return a.names[i] < a.names[j] })
	return a
}

// parse reads one resource list; stating marks the resources of a bad quantity unparsed.
func (a *volcanoAmounts) parse(l corev1.ResourceList, path string, stating bool, c errs) resources.Vector {
	v := resources.Vector{}
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names) // errors in the same order on every run
	for _, n := range names {
		rn := resources.Name(n)
		if q, ok := quantity(rn, l[corev1.ResourceName(n)], path+"["+n+"]", c); ok {
			v[rn] = q
		} else if stating {
			a.unparsed[rn] = true
		}
	}
	return v
}

// stated is the queue's own quota of n: deserved, else guarantee (the mapping's rule
// since before weight shares). ok is false when the spec states neither, and the quota
// of n is the queue's weight share.
func (a volcanoAmounts) stated(n resources.Name) (resources.Amount, bool) {
	if d, ok := a.deserved[n]; ok {
		return d, true
	}
	if g, ok := a.guarantee[n]; ok {
		return g, true
	}
	return 0, a.unparsed[n]
}

// weightOnly: the spec names no resource at all (Volcano's own default queue).
func (a volcanoAmounts) weightOnly() bool { return len(a.names) == 0 }

// shared lists the resources of names that the queue does not state, sorted.
func (a volcanoAmounts) shared(names []resources.Name) []resources.Name {
	var out []resources.Name
	for _, n := range names {
		if _, ok := a.stated(n); !ok {
			out = append(out, n)
		}
	}
	return out
}

// needsShare: some quota of the queue is a weight share.
func (a volcanoAmounts) needsShare() bool {
	return a.weightOnly() || len(a.shared(a.names)) > 0
}

// volcanoWeight is the queue's weight as Volcano reads it: 0 or unset is 1.
func volcanoWeight(q volcanoQueue) int64 {
	if w := int64(q.in.Spec.Weight); w > 0 {
		return w
	}
	return 1
}
