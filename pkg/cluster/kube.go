package cluster

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// NodeFromKube builds a Node from a v1 Node as `kubectl get nodes -o yaml` prints it.
//
// GPUs come from GPU Feature Discovery labels (model, count, MIG config and strategy,
// time-slicing/MPS replicas) checked against what the device plugin advertises in
// status.allocatable (or status.capacity). When the two disagree, the advertised
// capacity wins and the node carries a Warning saying so. Errors name the node and the
// field. A node without a Ready condition (hand-written manifests) counts as ready.
func NodeFromKube(in api.Node) (Node, error) {
	obj := &in.Object
	n := Node{
		Name:          obj.Name,
		Labels:        copyLabels(obj.Labels),
		Taints:        append([]corev1.Taint(nil), obj.Spec.Taints...),
		Unschedulable: obj.Spec.Unschedulable,
		Ready:         readyOf(obj),
		Source:        in.Source,
	}
	if n.Name == "" {
		return Node{}, fmt.Errorf("node (%s): metadata.name: must not be empty", in.Source)
	}
	ct, ok := capacityTypeOf(n.Labels)
	if !ok {
		return Node{}, n.errf("metadata.labels["+api.LabelCapacityType+"]", "unknown capacity type %q: want %s, %s or %s", n.Labels[api.LabelCapacityType], api.CapacityOnDemand, api.CapacitySpot, api.CapacityReserved)
	}
	n.CapacityType, n.Pool = ct, poolOf(n.Labels)
	if err := n.checkOperatorLabels(); err != nil {
		return Node{}, err
	}
	alloc, field := obj.Status.Allocatable, "status.allocatable"
	if len(alloc) == 0 {
		alloc, field = obj.Status.Capacity, "status.capacity"
	}
	advertised := resources.Vector{}
	n.Allocatable = resources.Vector{}
	names := make([]string, 0, len(alloc))
	for name := range alloc {
		names = append(names, string(name))
	}
	sort.Strings(names) // the first bad quantity reported is the same on every run
	for _, name := range names {
		q := alloc[corev1.ResourceName(name)]
		rn := resources.Name(name)
		a, err := resources.FromQuantity(rn, q)
		if err != nil {
			return Node{}, n.errf(field+"["+name+"]", "%v", err)
		}
		if rn.IsGPU() {
			advertised[rn] = a
		} else {
			n.Allocatable[rn] = a
		}
	}
	devs, warns, err := devicesFromKube(&n, advertised, field, obj.Annotations[devices.AnnotationReplicatedDevices])
	if err != nil {
		return Node{}, err
	}
	n.Devices, n.Warnings = devs, warns
	return n, nil
}

func (n *Node) errf(field, format string, args ...any) error {
	return fmt.Errorf("node %q (%s): %s: %s", n.Name, n.Source, field, fmt.Sprintf(format, args...))
}

func (n *Node) warn(field, format string, args ...any) Warning {
	return Warning{Node: n.Name, Field: field, Message: fmt.Sprintf(format, args...)}
}

func copyLabels(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// readyOf reads the Ready condition; nodes without one count as ready.
func readyOf(obj *corev1.Node) bool {
	for _, c := range obj.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return true
}

// intLabel parses an optional non-negative integer label (0 when absent).
func (n *Node) intLabel(key string) (int, error) {
	v, ok := n.Labels[key]
	if !ok {
		return 0, nil
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return 0, n.errf("metadata.labels["+key+"]", "%q is not a non-negative integer", v)
	}
	return i, nil
}

// sharingFromLabels reads the sharing mode the labels describe.
func (n *Node) sharingFromLabels() (devices.Sharing, error) {
	l := n.Labels
	strategy := l[devices.LabelMIGStrategy]
	if cfg := l[devices.LabelMIGConfig]; cfg != "" && cfg != "all-disabled" && strategy != "none" && l[devices.LabelMIGCapable] != "false" {
		s := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: cfg}
		if strategy == string(devices.MIGSingle) {
			s.MIGStrategy = devices.MIGSingle
		}
		return s, nil
	}
	if l[devices.LabelGPUSharing] == string(devices.Fractional) {
		return devices.Sharing{Mode: devices.Fractional}, nil
	}
	replicas, err := n.intLabel(devices.LabelGPUReplicas)
	if err != nil {
		return devices.Sharing{}, err
	}
	switch l[devices.LabelSharingStrategy] {
	case "mps":
		return devices.Sharing{Mode: devices.MPS, Replicas: max(replicas, 1)}, nil
	case "time-slicing":
		return devices.Sharing{Mode: devices.TimeSlicing, Replicas: max(replicas, 1)}, nil
	}
	if replicas > 1 {
		return devices.Sharing{Mode: devices.TimeSlicing, Replicas: replicas}, nil
	}
	return devices.Sharing{Mode: devices.Exclusive}, nil
}
