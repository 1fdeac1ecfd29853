package manifest

import (
	"errors"

	"github.com/gantry-sched/gantry/pkg/dra"
	resourcev1 "k8s.io/api/resource/v1"
)

// checkSlices runs once every file is read: each ResourceSlice of NVIDIA's driver must
// belong to a node the files define, and each node's slices must read back into GPUs
// (dra.GPUsFromSlices), so a node dump whose GPUs are only in slices replays as that
// cluster. Devices of types Gantry does not model are left out without an error;
// slices of other drivers are kept and not read.
func (l *loader) checkSlices() {
	if len(l.objs.ResourceSlices) == 0 {
		return
	}
	nodes := map[string]bool{}
	for n := range l.nodeNames {
		nodes[n] = true
	}
	for _, n := range l.objs.Nodes {
		nodes[n.Object.Name] = true
	}
	byNode := map[string][]resourcev1.ResourceSlice{}
	var order []string
	for _, rs := range l.objs.ResourceSlices {
		s := rs.Object
		if s.Spec.Driver != dra.DriverName {
			continue
		}
		node := *s.Spec.NodeName
		if !nodes[node] {
			l.context("ResourceSlice", s.Name).add("spec.nodeName", "node %q not found (no v1 Node or NodePool node of that name)", node)
			continue
		}
		if _, seen := byNode[node]; !seen {
			order = append(order, node)
		}
		byNode[node] = append(byNode[node], s)
	}
	for _, node := range order {
		_, err := dra.GPUsFromSlices(node, byNode[node])
		var ignored *dra.IgnoredDevicesError
		if err != nil && !errors.As(err, &ignored) {
			l.context("ResourceSlice", byNode[node][0].Name).add("spec.devices", "%v", err)
		}
	}
}
