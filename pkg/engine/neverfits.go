package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// NeverFit is a workload that no placement could ever start, even on its cluster with
// nothing running: `gantry validate` reports it, and the simulator holds it as NeverFits
// instead of letting it wait as "may fit later" forever.
type NeverFit struct {
	Workload api.WorkloadID
	// PodSet is the pod set that found no room (the first one when several do not).
	PodSet string
	// Why says what cannot be held, e.g. "no node can hold one pod" or "the gang needs 4
	// pods at once, the empty cluster holds 2"; with the cluster totals it exceeds.
	Why string
	// Closest describes the node that came closest (fewest rejections) and Rejections
	// why even it refuses; empty when no node was examined.
	Closest    string
	Rejections []string
}

// Detail renders the finding on one line: why, and the closest node with its refusals.
func (n NeverFit) Detail() string {
	if n.Closest == "" {
		return n.Why
	}
	return n.Why + "; closest: " + n.Closest + " (" + strings.Join(n.Rejections, "; ") + ")"
}

// Remedy is the change that would let it run: a node the closest one falls short of, or
// a smaller gang.
func (n NeverFit) Remedy() string {
	if n.Closest != "" {
		return "a node that " + n.Closest + " falls short of: " + strings.Join(n.Rejections, "; ")
	}
	return "more nodes of the shapes the gang fits, or a smaller gang: " + n.Why
}

// NeverFitChecker tells, for the empty cluster of a set of nodes, which workloads no
// placement could ever start. It asks the real placement (static node checks, the
// device model's Fit on fresh nodes, gang and topology rules) under every flavor the
// workload's ClusterQueue could assign, so a workload never fits only when every
// choice fails. Workloads whose queue does not resolve are tried without flavor
// constraints: their queue problem is reported elsewhere.
type NeverFitChecker struct {
	snap     *cluster.Snapshot
	capacity resources.Vector
	queues   neverFitFlavors
	// answers are kept per ClusterQueue and shape: a fleet of equal jobs costs one
	// placement on the empty cluster.
	answers map[string]neverFitAnswer
	// claims compiles DRA claims with the objects' DeviceClasses.
	claims *placement.DeviceClaims
}

type neverFitAnswer struct {
	nf    NeverFit
	never bool
}

// NewNeverFitChecker builds the empty cluster of nodes; objs gives the flavors and
// queues. An error means the nodes themselves could not be built.
func NewNeverFitChecker(nodes []cluster.Node, objs *api.Objects) (*NeverFitChecker, error) {
	snap, err := cluster.NewSnapshot(nodes, objs.Topologies)
	if err != nil {
		return nil, err
	}
	flavors := map[string]api.ResourceFlavor{}
	for _, f := range objs.Flavors {
		flavors[f.Name] = f
	}
	resolver, err := admission.NewResolver(objs)
	if err != nil {
		return nil, err
	}
	classes, err := CompileClasses(objs)
	if err != nil {
		return nil, err
	}
	return &NeverFitChecker{snap: snap, capacity: neverFitCapacity(snap), claims: placement.NewDeviceClaims(classes),
		queues: neverFitFlavors{flavors: flavors, resolver: resolver}, answers: map[string]neverFitAnswer{}}, nil
}

// Check reports whether w can never be placed, and why.
func (c *NeverFitChecker) Check(w *api.Workload) (NeverFit, bool) {
	key := c.queues.resolver.Resolve(w).ClusterQueue + "\x00" + ShapeKey(w)
	a, ok := c.answers[key]
	if !ok {
		a.nf, a.never = neverFits(c.snap, w, c.queues.choices(w), c.capacity, c.claims)
		c.answers[key] = a
	}
	a.nf.Workload = w.ID()
	return a.nf, a.never
}

// NeverFits lists the workloads of objs that cannot be placed even on the empty cluster
// the objects describe (NodePools and Nodes), in workload ID order.
func NeverFits(objs *api.Objects) ([]NeverFit, error) {
	nodes, err := cluster.NodesOf(objs)
	if err != nil {
		return nil, err
	}
	c, err := NewNeverFitChecker(nodes, objs)
	if err != nil {
		return nil, err
	}
	var out []NeverFit
	for i := range objs.Workloads {
		if nf, never := c.Check(&objs.Workloads[i]); never {
			out = append(out, nf)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workload < out[j].Workload })
	return out, nil
}

// neverFitCapacity sums every node's GPU resources as the device layer advertises them.
func neverFitCapacity(snap *cluster.Snapshot) resources.Vector {
	total := resources.Vector{}
	for i := 0; i < snap.NumNodes(); i++ {
		if d := snap.Devices(i); d != nil {
			total.AddInPlace(d.Capacity())
		}
	}
	return total
}

// neverFitMaxTries bounds the flavor combinations tried per workload: each pod set may go
// to any flavor of its group, and a gang of many pod sets would otherwise multiply them.
const neverFitMaxTries = 32

// neverFits places w on a fresh overlay of the empty cluster under each flavor choice;
// it never fits when every choice fails, and the first failure is the one explained.
func neverFits(snap *cluster.Snapshot, w *api.Workload, choices []placement.FlavorConstraints, capacity resources.Vector, claims *placement.DeviceClaims) (NeverFit, bool) {
	var first *placement.Diagnosis
	for _, fc := range choices {
		_, diag := placement.PlaceWorkload(snap.Overlay(), w, fc, placement.Options{Claims: claims})
		if diag == nil {
			return NeverFit{}, false
		}
		if first == nil {
			first = diag
		}
	}
	if first == nil {
		return NeverFit{}, false
	}
	return explainNeverFit(snap, w, first, capacity), true
}

// explainNeverFit turns the placement's diagnosis into the report's terms.
func explainNeverFit(snap *cluster.Snapshot, w *api.Workload, d *placement.Diagnosis, capacity resources.Vector) NeverFit {
	nf := NeverFit{Workload: w.ID(), PodSet: d.PodSet}
	alone := d.Placed == 0 && d.FitNodes == 0 // the first pod already found no node
	switch {
	case d.Err != "":
		nf.Why = "invalid request: " + d.Err
	case alone:
		nf.Why = fmt.Sprintf("no node of the cluster can hold one pod (0 of %d nodes)", d.TotalNodes)
	case d.Topology != "":
		nf.Why = fmt.Sprintf("the gang needs %d pods at once and no topology domain of the empty cluster holds them: %s", d.GangSize, d.Topology)
	default:
		nf.Why = fmt.Sprintf("the gang needs %d pods at once, the empty cluster holds %d", d.GangSize, d.Placed)
	}
	if over := neverFitExceeded(neverFitGang(w), capacity); over != "" {
		nf.Why += "; " + over
	}
	// The near miss is measured with the gang's earlier pods in place; only for the
	// first pod is it a node of the empty cluster, the shape this report is about.
	if m := d.NearMiss; m != nil && alone {
		nf.Closest = neverFitNodeShape(snap, m.Node)
		for _, r := range m.Rejections {
			nf.Rejections = append(nf.Rejections, r.String())
		}
	}
	return nf
}

// neverFitGang is what the pods that must start together ask for in all.
func neverFitGang(w *api.Workload) resources.Vector {
	total := resources.Vector{}
	for _, ps := range w.PodSets {
		total.AddInPlace(ps.Requests.Scale(int64(ps.GangCount())))
	}
	return total
}

// exceeded names each GPU resource the gang needs more of than the whole cluster has,
// e.g. "needs 32 nvidia.com/gpu in all, the cluster has 16".
func neverFitExceeded(need, capacity resources.Vector) string {
	var parts []string
	for _, n := range need.Names() {
		if !n.IsGPU() || need[n] <= capacity[n] {
			continue
		}
		parts = append(parts, fmt.Sprintf("needs %s %s in all, the cluster has %s",
			resources.Format(n, need[n]), n, resources.Format(n, capacity[n])))
	}
	return strings.Join(parts, "; ")
}

// neverFitNodeShape describes a node by what decides fitting: pool, GPUs and their sharing,
// CPU and memory, e.g. "node h100-full-0 (pool h100-full, 8 x H100-SXM5-80GB exclusive,
// cpu 192, memory 2Ti)".
func neverFitNodeShape(snap *cluster.Snapshot, name string) string {
	i, ok := snap.NodeIndex(name)
	if !ok {
		return "node " + name
	}
	n := snap.Node(i)
	parts := []string{}
	if n.Pool != "" {
		parts = append(parts, "pool "+n.Pool)
	}
	if model, mode, ok := firstGPU(n); ok {
		parts = append(parts, fmt.Sprintf("%d x %s %s", n.GPUCount(), model, mode))
	} else {
		parts = append(parts, "no GPUs")
	}
	for _, r := range []resources.Name{resources.CPU, resources.Memory} {
		parts = append(parts, fmt.Sprintf("%s %s", r, resources.Format(r, n.Allocatable[r])))
	}
	return fmt.Sprintf("node %s (%s)", n.Name, strings.Join(parts, ", "))
}

// firstGPU is the model and sharing of n's first GPU (false: n counts no GPUs).
func firstGPU(n *cluster.Node) (devices.ModelID, devices.SharingMode, bool) {
	if n.GPUCount() == 0 { // also when n has no device layer
		return "", "", false
	}
	return n.Devices.FirstGPU()
}

// neverFitFlavors answers which flavors a workload's ClusterQueue could assign.
type neverFitFlavors struct {
	flavors  map[string]api.ResourceFlavor
	resolver *admission.Resolver
}

// choices lists the flavor constraints to try for w: every combination of its pod sets'
// candidate flavors (bounded by neverFitMaxTries), or one try without constraints when
// no pod set has candidates.
func (q neverFitFlavors) choices(w *api.Workload) []placement.FlavorConstraints {
	cq, _ := q.resolver.ClusterQueue(q.resolver.Resolve(w).ClusterQueue)
	out := []placement.FlavorConstraints{{}}
	for k := range w.PodSets {
		ps := &w.PodSets[k]
		cands := q.candidates(cq, ps)
		if len(cands) == 0 {
			continue
		}
		var next []placement.FlavorConstraints
		for _, fc := range out {
			for _, c := range cands {
				if len(next) == neverFitMaxTries {
					break
				}
				n := make(placement.FlavorConstraints, len(fc)+1)
				for name, v := range fc {
					n[name] = v
				}
				n[ps.Name] = c
				next = append(next, n)
			}
		}
		out = next
	}
	return out
}

// candidates are the flavors of the resource group covering the pod set's deciding
// resource, the one whose flavor places it (as the engine picks it: the GPU resource
// last in name order, else the first resource in name order).
func (q neverFitFlavors) candidates(cq *api.ClusterQueue, ps *api.PodSet) []placement.FlavorConstraint {
	if cq == nil {
		return nil
	}
	deciding, ok := neverFitDeciding(ps.Requests)
	if !ok {
		return nil
	}
	var out []placement.FlavorConstraint
	for _, g := range cq.ResourceGroups {
		if !neverFitCovers(g, deciding) {
			continue
		}
		for _, f := range g.Flavors {
			if rf, known := q.flavors[f.Name]; known {
				out = append(out, placement.FlavorConstraintOf(rf))
			}
		}
	}
	return out
}

// neverFitDeciding is the last GPU resource in name order, else the first resource.
func neverFitDeciding(req resources.Vector) (resources.Name, bool) {
	names := req.Names()
	for i := len(names) - 1; i >= 0; i-- {
		if names[i].IsGPU() && req[names[i]] > 0 {
			return names[i], true
		}
	}
	for _, n := range names {
		if req[n] > 0 {
			return n, true
		}
	}
	return "", false
}

func neverFitCovers(g api.ResourceGroup, n resources.Name) bool {
	for _, c := range g.CoveredResources {
		if c == n {
			return true
		}
	}
	return false
}
