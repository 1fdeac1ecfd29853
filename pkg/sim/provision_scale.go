package sim

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
)

// The simulated cluster-autoscaler: how many new nodes of which pool hold a gang, and
// adding them.

// managedPart is the part of w a request is for: the pod sets that request one of the
// config's managed resources (all when it names none), at the counts a admitted, with
// their assignments. any is false when no pod set is managed.
func managedPart(w *api.Workload, a admission.Assignment, cfg api.ProvisioningRequestConfig) (*api.Workload, admission.Assignment, bool) {
	counts := map[string]int32{}
	for _, ps := range a.PodSets {
		counts[ps.Name] = ps.Count
	}
	part := *w
	part.PodSets = nil
	for _, ps := range w.PodSets {
		if !cfg.Manages(ps.Requests) {
			continue
		}
		if c, ok := counts[ps.Name]; ok && c < ps.Count {
			ps.Count = c
			if ps.MinCount > c {
				ps.MinCount = c
			}
		}
		part.PodSets = append(part.PodSets, ps)
	}
	if len(part.PodSets) == 0 {
		return nil, admission.Assignment{}, false
	}
	keep := a
	keep.PodSets = nil
	for _, ps := range a.PodSets {
		for _, m := range part.PodSets {
			if m.Name == ps.Name {
				keep.PodSets = append(keep.PodSets, ps)
			}
		}
	}
	return &part, keep, true
}

// scaleUp picks the first autoscaled pool (by name) whose new nodes could hold the whole
// gang within its maximum, and the fewest nodes that do: the gang is placed on that many
// empty nodes of the pool's shape, under the reservation's flavors.
func (s *Simulator) scaleUp(w *api.Workload, a admission.Assignment, claims *placement.DeviceClaims) (*autoscaledPool, int, bool) {
	for _, p := range s.prov.pools {
		for k := 1; p.size+k <= p.max; k++ {
			nodes, err := newPoolNodes(p, p.next, k)
			if err != nil {
				break // the pool's spec does not expand: it cannot serve
			}
			snap, err := cluster.NewSnapshot(nodes, s.objs.Topologies)
			if err != nil {
				break
			}
			if engine.GangFits(snap, w, a, s.prov.flavors, claims) {
				return p, k, true
			}
		}
	}
	return nil, 0, false
}

// newPoolNodes are count new nodes of the pool, named on from its first index from, as
// a NodeAdd of the pool with that many more nodes would name them.
func newPoolNodes(p *autoscaledPool, from, count int) ([]cluster.Node, error) {
	grown := p.pool
	grown.Count = from + count
	all, err := cluster.ExpandPool(grown)
	if err != nil {
		return nil, err
	}
	return all[from:], nil
}

// addProvisionedNodes adds the nodes a request was granted, as a NodeAdd cluster event
// adds nodes: into the snapshot and the known nodes, logged, and the engine told.
func (s *Simulator) addProvisionedNodes(p *autoscaledPool, from, count int) error {
	nodes, err := newPoolNodes(p, from, count)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		s.specs[n.Name] = n
		if err := s.putNode(n); err != nil {
			return err
		}
		s.emit(EventRecord{Event: EvNode, Node: n.Name, Change: "added", Reason: "provisioned by the autoscaler"})
	}
	s.nodesReshaped()
	s.sched.NodesChanged()
	s.dirty = true
	return nil
}

// assignmentFlavors joins an assignment's flavors, sorted and de-duplicated (as
// flavorText does for admissions).
func assignmentFlavors(a admission.Assignment) string {
	return strings.Join(a.FlavorNames(), ",")
}
