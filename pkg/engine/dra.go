package engine

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// CompileClasses compiles the objects' DeviceClasses with their quota mappings and the
// GPUs of the nodes the objects describe (NodePools, v1 Nodes and their
// ResourceSlices, as cluster.NodesOf reads them), which allocationMode All is charged
// by; nil when there are neither classes nor mappings (no pod set may then use claims).
// Objects that describe no node (a controller's queue objects: its nodes come from
// informers) compile without nodes: see CompileClassesOn.
func CompileClasses(objs *api.Objects) (*dra.Classes, error) {
	if len(objs.DeviceClasses) == 0 && len(objs.QuotaMappings) == 0 {
		return nil, nil
	}
	nodes, err := objectNodes(objs)
	if err != nil {
		return nil, err
	}
	return CompileClassesOn(objs, nodes)
}

// CompileClassesOn compiles the objects' DeviceClasses with their quota mappings
// against nodes (name -> GPUs, cluster.GPUsByNode), for a driver that holds the
// cluster's nodes outside the objects. Nil nodes compile without them, and an
// allocationMode All request is then a compile error; an empty map is a cluster
// without GPUs, on which no All request can be allocated.
func CompileClassesOn(objs *api.Objects, nodes map[string][]devices.GPU) (*dra.Classes, error) {
	ms := make([]dra.QuotaMapping, len(objs.QuotaMappings))
	for i, m := range objs.QuotaMappings {
		ms[i] = dra.QuotaMapping{Resource: m.Resource, DeviceClassNames: m.DeviceClassNames}
	}
	var opts []dra.ClassOption
	if nodes != nil {
		opts = append(opts, dra.WithNodes(nodes))
	}
	classes, err := dra.NewClasses(objs.DeviceClassObjects(), ms, opts...)
	if err != nil {
		return nil, fmt.Errorf("engine: device classes: %w", err)
	}
	return classes, nil
}

// objectNodes are the GPUs of the nodes objs describes; nil when it describes none.
func objectNodes(objs *api.Objects) (map[string][]devices.GPU, error) {
	if len(objs.NodePools) == 0 && len(objs.Nodes) == 0 {
		return nil, nil
	}
	nodes, err := cluster.NodesOf(objs)
	if err != nil {
		return nil, fmt.Errorf("engine: device classes: the nodes allocationMode All is charged by: %w", err)
	}
	return cluster.GPUsByNode(nodes), nil
}

// writeClaimsKey adds what placement reads of a pod set's DRA claims to a shape key:
// each claim's spec (selectors, counts, constraints), and the name of a shared claim
// (two workloads naming one ResourceClaim share its devices, not just their shape).
func writeClaimsKey(b *strings.Builder, claims []api.PodClaim) {
	for _, c := range claims {
		b.WriteString("/claim:")
		b.WriteString(c.Name)
		if c.Shared() {
			b.WriteString("@" + c.ResourceClaimName)
		}
		if c.Spec != nil {
			b.WriteByte('=')
			b.WriteString(c.Spec.String())
		}
	}
}
