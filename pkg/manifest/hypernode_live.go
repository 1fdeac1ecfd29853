package manifest

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// NodeLabels is a node as a HyperNode's members select it: by name or by labels.
type NodeLabels struct {
	Name   string
	Labels map[string]string
}

// LiveHyperNodes is what ResolveHyperNodes makes of a cluster's HyperNodes.
type LiveHyperNodes struct {
	HyperNodes []api.HyperNode
	// Labels are the tier labels per node name (api.HyperNodeLabels), to merge into
	// the nodes' own.
	Labels map[string]map[string]string
	// Topology is the Topology api.HyperNodeTopology the loader adds for the same
	// HyperNodes (addHyperNodeTopology); nil when they give no tier.
	Topology *api.Topology
}

// ResolveHyperNodes reads Volcano HyperNodes as a client returns them and resolves
// their members against the cluster's nodes with the loader's own code (hyperNode,
// resolveHyperNodes): the same members, checks and tier labels as the same objects
// loaded from files. Fields this version does not know are ignored, as for every
// object read from a cluster (WorkloadOfObject). Each object's Source is source and
// its name. Problems come back as an ErrorList naming each HyperNode and field; with
// any, no tier labels are given (a half-checked tree could put a node in two domains
// of one tier).
func ResolveHyperNodes(source string, objs []*unstructured.Unstructured, nodes []NodeLabels) (LiveHyperNodes, error) {
	l := newLoader()
	l.unknownOK = true
	for _, u := range objs {
		name := source + " " + u.GetName()
		v, err := valueOf(u.Object, 0)
		if err != nil {
			l.errs = append(l.errs, &Error{Source: srcOf(name, 0), Kind: "HyperNode", Name: u.GetName(), Msg: err.Error()})
			continue
		}
		d := document{file: name, v: v}
		l.hyperNode(d, l.newCtx(d, "HyperNode", u.GetName()))
	}
	for _, n := range sortedNodes(nodes) {
		l.objs.Nodes = append(l.objs.Nodes, api.Node{Object: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}})
	}
	l.resolveHyperNodes()
	if len(l.errs) > 0 {
		return LiveHyperNodes{}, l.errs.sorted()
	}
	out := LiveHyperNodes{HyperNodes: l.objs.HyperNodes, Labels: api.HyperNodeLabels(l.objs.HyperNodes)}
	for i := range l.objs.Topologies { // only the HyperNode one: no other Topology was read
		out.Topology = &l.objs.Topologies[i]
	}
	return out, nil
}

// PodGroupTopology reads a Volcano PodGroup as a client returns it with the loader's
// own reader (podGroup) and gives the request its spec.networkTopology makes of each
// pod set, resolved against hyperNodes (ResolveHyperNodes' result) as the loader
// resolves it (resolveVolcanoRequests): a highestTierName becomes its tier, and with
// HyperNodes a bounded request names their narrowest level. nil when the PodGroup has
// no networkTopology. Problems come back as an ErrorList naming the PodGroup and field
// (a mode Volcano does not know, a tier name no HyperNode has).
func PodGroupTopology(source string, pg *unstructured.Unstructured, hyperNodes []api.HyperNode) (*api.TopologyRequest, error) {
	l := newLoader()
	l.unknownOK = true
	name := joinName(pg.GetNamespace(), pg.GetName())
	v, err := valueOf(pg.Object, 0)
	if err != nil {
		return nil, ErrorList{&Error{Source: srcOf(source+" "+name, 0), Kind: "PodGroup", Name: name, Msg: err.Error()}}
	}
	d := document{file: source + " " + name, v: v}
	l.podGroup(d, l.newCtx(d, "PodGroup", name))
	l.objs.HyperNodes = hyperNodes
	l.resolveVolcanoRequests()
	if len(l.errs) > 0 {
		return nil, l.errs.sorted()
	}
	for _, p := range l.podGroups { // the one just read
		return p.topology, nil
	}
	return nil, nil
}

func sortedNodes(nodes []NodeLabels) []NodeLabels {
	out := append([]NodeLabels(nil), nodes...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
