package bench

import (
	"fmt"
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
	corev1 "k8s.io/api/core/v1"
)

// FragPolicies are the policies `gantry bench frag` offers: placement's single-pod
// policies (random, best-fit, packing, and Gantry's fragmentation-aware fgd).
func FragPolicies() []string {
	return []string{placement.PolicyRandom, placement.PolicyBestFit, placement.PolicyPacking, placement.PolicyFGD}
}

// PlacementPolicy adapts placement's single-pod policy of the given name to the
// experiment: the nodes become a cluster snapshot, each placed pod is assumed on an
// overlay over it, and FGD learns the shape distribution of the whole pod list up front
// (the paper's target workload).
func PlacementPolicy(name string) NamedPolicy {
	return NamedPolicy{Name: name, New: func(nodes []api.NodePool, pods []FragPod, rng *rand.Rand) (PodPolicy, error) {
		return newPlacementPolicy(name, nodes, pods, rng)
	}}
}

// placementPolicy places pods with a placement.Policy on an overlay.
type placementPolicy struct {
	policy placement.Policy
	ov     *cluster.Overlay
	rng    *rand.Rand
	// reqs caches each trace pod's prepared request by name (sampled copies share it).
	reqs map[string]*placement.PodRequest
	n    int
}

func newPlacementPolicy(name string, pools []api.NodePool, pods []FragPod, rng *rand.Rand) (*placementPolicy, error) {
	var nodes []cluster.Node
	for _, p := range pools {
		ns, err := cluster.ExpandPool(p)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, ns...)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		return nil, err
	}
	shapes := placement.NewShapeStats()
	reqs := make(map[string]*placement.PodRequest, len(pods))
	for _, p := range pods {
		shapes.Observe(p.Requests)
		ps := fragPodSet(p)
		r, err := placement.NewPodRequest(&ps, placement.FlavorConstraint{})
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		reqs[p.Name] = r
	}
	pol, err := placement.NewPolicy(name, shapes)
	if err != nil {
		return nil, err
	}
	return &placementPolicy{policy: pol, ov: snap.Overlay(), rng: rng, reqs: reqs}, nil
}

// fragPodSet is the one-pod pod set of a trace pod, with its model constraint as
// required node affinity on trace.LabelTraceGPUModel.
func fragPodSet(p FragPod) api.PodSet {
	ps := api.PodSet{Name: "main", Count: 1, Requests: p.Requests}
	if len(p.Models) > 0 {
		ps.Affinity = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: trace.LabelTraceGPUModel, Operator: corev1.NodeSelectorOpIn, Values: p.Models}},
		}}}
	}
	return ps
}

// Place chooses a node and assumes the pod there; false when no node fits.
func (pp *placementPolicy) Place(p FragPod) (bool, error) {
	req := pp.reqs[p.Name]
	if req == nil {
		return false, fmt.Errorf("pod %s was not in the pod list the policy was built for", p.Name)
	}
	choice, ok := pp.policy.Choose(pp.ov, req, pp.rng)
	if !ok {
		return false, nil
	}
	pp.n++
	ref := cluster.PodRef{Workload: api.WorkloadID(trace.OpenBNamespace + "/" + p.Name), PodSet: "arrival", Index: pp.n}
	if err := pp.ov.AssumeAt(ref, choice.Node, p.Requests, choice.Devices); err != nil {
		return false, fmt.Errorf("assume on %s: %w", choice.NodeName, err)
	}
	return true, nil
}
