package cluster

import (
	"errors"
	"fmt"
	"maps"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	resourcev1 "k8s.io/api/resource/v1"
)

// NodesOf expands the objects' NodePools and reads their v1 Nodes: the cluster the
// objects describe, with nothing bound. A v1 Node that advertises no GPUs through the
// device plugin gets those its ResourceSlices publish (WithSliceDevices: a node dump of
// a cluster that has moved to DRA). The simulator's first snapshot and validate's
// never-fits check both start from it.
func NodesOf(objs *api.Objects) ([]Node, error) {
	var nodes []Node
	// The loader labels v1 Nodes with their HyperNode tiers; a pool's nodes exist only
	// from here on, so they get theirs here (each node's label map is its own).
	tiers := api.HyperNodeLabels(objs.HyperNodes)
	for _, p := range objs.NodePools {
		ns, err := ExpandPool(p)
		if err != nil {
			return nil, err
		}
		for i := range ns {
			maps.Copy(ns[i].Labels, tiers[ns[i].Name])
		}
		nodes = append(nodes, ns...)
	}
	for _, kn := range objs.Nodes {
		n, err := NodeFromKube(kn)
		if err != nil {
			return nil, err
		}
		if len(objs.ResourceSlices) > 0 {
			if err := WithSliceDevices(&n, objs.SlicesOfNode(n.Name)); err != nil {
				return nil, err
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// WithSliceDevices gives n the GPUs that NVIDIA's DRA driver (dra.DriverName)
// publishes for it in slices, when n advertises none through the device plugin. A node
// advertising GPUs through the device plugin keeps those: its slices describe the same
// GPUs (the node agent derives both from NVML), and the device plugin's MIG instances
// are the ones that exist. The simulator (NodesOf) and the controller (each Node as its
// slices change) both read a node's GPUs through here, so one node dump gives one
// cluster in both.
func WithSliceDevices(n *Node, slices []resourcev1.ResourceSlice) error {
	if n.Devices != nil || len(slices) == 0 {
		return nil
	}
	nd, err := SliceDevices(n.Name, slices)
	if err != nil {
		return err
	}
	n.Devices = nd
	return nil
}

// SliceDevices builds node's device model from the ResourceSlices published for it;
// nil when they hold no GPU. Devices the model has no place for (another type than gpu
// or mig, another driver's) are left out, as NVIDIA's device plugin would not offer
// them either.
func SliceDevices(node string, slices []resourcev1.ResourceSlice) (*devices.NodeDevices, error) {
	if len(slices) == 0 {
		return nil, nil
	}
	gpus, err := dra.GPUsFromSlices(node, slices)
	var ignored *dra.IgnoredDevicesError
	if err != nil && !errors.As(err, &ignored) {
		return nil, fmt.Errorf("node %q: ResourceSlices of driver %s: %w", node, dra.DriverName, err)
	}
	if len(gpus) == 0 {
		return nil, nil
	}
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		return nil, fmt.Errorf("node %q: ResourceSlices of driver %s: %w", node, dra.DriverName, err)
	}
	return nd, nil
}
