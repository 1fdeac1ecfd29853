package bench

import (
	"fmt"
	"math/rand"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
	corev1 "k8s.io/api/core/v1"
)

// FragDefault is the policy that places each pod as `gantry simulate` and the controller
// do: the engine's gang placement with its default scorers (see defaultPolicy).
const FragDefault = "default"

// FragPolicies are the policies `gantry bench frag` offers: the FGD paper's five
// baselines and its FGD, Gantry's own single-pod policy, and Gantry's default placement.
func FragPolicies() []string {
	return append(placement.PolicyNames(), FragDefault)
}

// PlacementPolicy is the named policy of FragPolicies (or a placement scorer name, ranked
// alone); every pod of the list is known up front, as the paper's target workload.
func PlacementPolicy(name string) NamedPolicy {
	return NamedPolicy{Name: name, New: func(nodes []api.NodePool, pods []FragPod, rng *rand.Rand) (PodPolicy, error) {
		if name == FragDefault {
			return newDefaultPolicy(nodes, pods, rng)
		}
		return newPlacementPolicy(name, nodes, pods, rng)
	}}
}

// fragState is the cluster of one run and the prepared requests of the trace's pods.
type fragState struct {
	snap   *cluster.Snapshot
	ov     *cluster.Overlay
	shapes *placement.ShapeStats
	// reqs caches each trace pod's prepared request by name (sampled copies share it).
	reqs map[string]*placement.PodRequest
	sets map[string]*api.PodSet
	n    int
}

// newFragState builds the snapshot of the nodes and learns the nodes' GPUs and the pods'
// shapes (with their GPU model constraints) and requests, as the engine learns them.
func newFragState(pools []api.NodePool, pods []FragPod) (*fragState, error) {
	st := &fragState{shapes: placement.NewShapeStats(),
		reqs: make(map[string]*placement.PodRequest, len(pods)), sets: make(map[string]*api.PodSet, len(pods))}
	var nodes []cluster.Node
	for _, p := range pools {
		ns, err := cluster.ExpandPool(p)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			st.shapes.ObserveNode(n.Labels, p.GPUsPerNode)
		}
		nodes = append(nodes, ns...)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		return nil, err
	}
	st.snap, st.ov = snap, snap.Overlay()
	for _, p := range pods {
		ps := fragPodSet(p)
		st.shapes.ObservePodSet(&ps)
		r, err := placement.NewPodRequest(&ps, placement.FlavorConstraint{})
		if err != nil {
			return nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		st.reqs[p.Name], st.sets[p.Name] = r, &ps
	}
	return st, nil
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

// ref is the next arrival's pod reference (sampled copies of one pod get their own).
func (st *fragState) ref(p FragPod) cluster.PodRef {
	st.n++
	return cluster.PodRef{Workload: api.WorkloadID(trace.OpenBNamespace + "/" + p.Name), PodSet: "arrival", Index: st.n}
}

// placementPolicy places pods with a placement.Policy on an overlay.
type placementPolicy struct {
	*fragState
	policy placement.Policy
	rng    *rand.Rand
}

func newPlacementPolicy(name string, pools []api.NodePool, pods []FragPod, rng *rand.Rand) (*placementPolicy, error) {
	st, err := newFragState(pools, pods)
	if err != nil {
		return nil, err
	}
	pol, err := placement.NewPolicy(name, st.shapes)
	if err != nil {
		return nil, err
	}
	return &placementPolicy{fragState: st, policy: pol, rng: rng}, nil
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
	if err := pp.ov.AssumeAt(pp.ref(p), choice.Node, p.Requests, choice.Devices); err != nil {
		return false, fmt.Errorf("assume on %s: %w", choice.NodeName, err)
	}
	return true, nil
}

// defaultPolicy places each pod as a one-pod workload with the engine's gang placement
// and the scorers a ClusterQueue without a placement policy gets, learned as the engine
// learns them: from the live workload (every pod arrived so far, placed or not: in the
// engine a pod that does not fit stays pending) and the nodes, through a ShapeCensus.
// Unlike the other policies it does not know the pod list up front.
type defaultPolicy struct {
	*fragState
	census *placement.ShapeCensus
	live   *placement.ShapeStats
	opts   placement.Options
}

func newDefaultPolicy(pools []api.NodePool, pods []FragPod, rng *rand.Rand) (*defaultPolicy, error) {
	st, err := newFragState(pools, pods)
	if err != nil {
		return nil, err
	}
	census := placement.NewShapeCensus()
	census.Nodes(st.snap)
	return &defaultPolicy{fragState: st, census: census, live: placement.NewShapeStats(),
		opts: placement.Options{Rand: rng, FitCache: &placement.FitCache{}, Quiet: true}}, nil
}

// Place runs the gang placement of a one-pod workload; it assumes the pod when it fits.
func (dp *defaultPolicy) Place(p FragPod) (bool, error) {
	ps := dp.sets[p.Name]
	if ps == nil {
		return false, fmt.Errorf("pod %s was not in the pod list the policy was built for", p.Name)
	}
	dp.n++
	w := api.Workload{Meta: api.Meta{Namespace: trace.OpenBNamespace, Name: p.Name + "-" + strconv.Itoa(dp.n)}, PodSets: []api.PodSet{*ps}}
	dp.census.Add(&w)
	if dp.census.Fill(dp.live) {
		dp.opts.Scorers = placement.DefaultScorersFor(dp.live)
	}
	_, d := placement.PlaceWorkload(dp.ov, &w, nil, dp.opts)
	if d != nil && d.Err != "" {
		return false, fmt.Errorf("pod %s: %s", p.Name, d.Err)
	}
	return d == nil, nil
}
