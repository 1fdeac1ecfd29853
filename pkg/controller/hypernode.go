package controller

import (
	"context"
	"maps"
	"sort"

	"github.com/gantry-sched/gantry/pkg/manifest"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Volcano's HyperNodes on a cluster: read through unstructured where their CRD is
// installed (and the controller may list them), resolved against the cache's nodes by
// the loader's own code (manifest.ResolveHyperNodes), and their tier labels
// (api.HyperNodeTierLabel) merged into the nodes of every snapshot, so a topology
// request on a tier places as it does in a simulation of the same objects.

// hyperNodeKind is Volcano's HyperNode.
func hyperNodeKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "topology.volcano.sh", Version: "v1alpha1", Kind: "HyperNode"}
}

// hyperNodeStore holds the cluster's HyperNodes by name, as delivered, and what the
// last node view made of them.
type hyperNodeStore struct {
	objs map[string]*unstructured.Unstructured
	// resolved is ResolveHyperNodes' result at the last node view (zero when there
	// were none or they did not resolve): the tiers a PodGroup's networkTopology is
	// read against, and the Topology the snapshot's queue objects get.
	resolved manifest.LiveHyperNodes
}

// applyHyperNode records (or, deleted, forgets) o when it is a HyperNode; false when it
// is not one. The node view is rebuilt with the new tiers at the next snapshot.
func (c *stateCache) applyHyperNode(o client.Object, deleted bool) bool {
	u, ok := o.(*unstructured.Unstructured)
	if !ok || u.GroupVersionKind() != hyperNodeKind() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if deleted {
		delete(c.hyperNodes.objs, u.GetName())
	} else {
		if c.hyperNodes.objs == nil {
			c.hyperNodes.objs = map[string]*unstructured.Unstructured{}
		}
		c.hyperNodes.objs[u.GetName()] = u
	}
	c.nodeView = nil
	return true
}

// label merges the HyperNodes' tier labels into v's nodes (each labelled node gets its
// own label map: the converted nodes are shared with the cache's entries). HyperNodes
// that do not resolve are a warning and label nothing. Nodes Gantry could not convert
// still count as members by name, so naming one is no error.
func (s *hyperNodeStore) label(v *nodeView) *nodeView {
	s.resolved = manifest.LiveHyperNodes{}
	if len(s.objs) == 0 {
		return v
	}
	names := make([]string, 0, len(s.objs))
	for n := range s.objs {
		names = append(names, n)
	}
	sort.Strings(names)
	objs := make([]*unstructured.Unstructured, len(names))
	for i, n := range names {
		objs[i] = s.objs[n]
	}
	nodes := make([]manifest.NodeLabels, 0, len(v.known))
	for _, n := range v.nodes {
		nodes = append(nodes, manifest.NodeLabels{Name: n.Name, Labels: n.Labels})
	}
	for name := range v.known {
		if _, converted := v.index[name]; !converted {
			nodes = append(nodes, manifest.NodeLabels{Name: name})
		}
	}
	res, err := manifest.ResolveHyperNodes("cluster HyperNode", objs, nodes)
	if err != nil {
		v.warnings = append(v.warnings, "HyperNodes not applied: "+err.Error())
		return v
	}
	s.resolved = res
	for i := range v.nodes {
		add := res.Labels[v.nodes[i].Name]
		if len(add) == 0 {
			continue
		}
		merged := maps.Clone(v.nodes[i].Labels)
		if merged == nil {
			merged = map[string]string{}
		}
		maps.Copy(merged, add)
		v.nodes[i].Labels = merged
	}
	return v
}

// hyperNodeKinds is HyperNode when its CRD is served and the controller may list it,
// else nothing (asked again at every resync, as for the other optional kinds): an
// informer on a kind it may not list would never sync and hold the controller's start.
func (w *watcher) hyperNodeKinds(ctx context.Context) []schema.GroupVersionKind {
	gvk := hyperNodeKind()
	if w.done[gvk.String()] {
		return nil // watched already
	}
	if w.direct != nil {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := w.direct.List(ctx, list, client.Limit(1)); err != nil {
			return nil
		}
	}
	return []schema.GroupVersionKind{gvk}
}
