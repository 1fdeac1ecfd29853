package cluster

import (
	"fmt"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// DefaultMaxPods is the pods limit of pool nodes that do not set one (the kubelet default).
const DefaultMaxPods = 110

// ExpandPool turns a NodePool into its Count nodes, named "<pool>-<i>". Each node gets the
// pool's labels and taints, kubernetes.io/hostname, the pool and capacity-type labels,
// GFD-style GPU labels, one label per topology level ("<Prefix><i/NodesPerDomain>"), and
// GPUs split into NVLink domains of GPUsPerNVLinkDomain. Errors name the pool and field.
func ExpandPool(p api.NodePool) ([]Node, error) {
	if err := validatePool(&p); err != nil {
		return nil, err
	}
	ct := p.CapacityType
	if ct == "" {
		ct = api.CapacityOnDemand
	}
	var model devices.Model
	var layout [][]devices.Instance
	sharing := p.Sharing
	if sharing.Mode == "" {
		sharing.Mode = devices.Exclusive
	}
	if p.GPUsPerNode > 0 {
		m, err := devices.LookupModel(p.GPUModel)
		if err != nil {
			return nil, poolErr(&p, "gpuModel", "%v", err)
		}
		if err := devices.ValidateSharing(m, sharing); err != nil {
			return nil, poolErr(&p, "sharing", "%v", err)
		}
		if sharing.Mode == devices.MIG {
			if layout, err = m.ResolveLayout(sharing, p.GPUsPerNode); err != nil {
				return nil, poolErr(&p, "sharing.layout", "%v", err)
			}
		}
		model = m
	}
	models := []devices.Model{model} // looked up once for the whole pool
	nodes := make([]Node, 0, p.Count)
	for i := 0; i < p.Count; i++ {
		n := Node{
			Name:         fmt.Sprintf("%s-%d", p.Name, i),
			Taints:       append([]corev1.Taint(nil), p.Taints...),
			Ready:        true,
			CapacityType: ct,
			Pool:         p.Name,
			Source:       p.Source,
			Allocatable:  poolAllocatable(&p),
		}
		n.Labels = poolLabels(&p, n.Name, ct, i, model, sharing)
		if p.GPUsPerNode > 0 {
			devs, err := devices.NewNodeDevicesWith(models, makeGPUs(model, sharing, p.GPUsPerNode, p.GPUsPerNVLinkDomain, layout))
			if err != nil {
				return nil, poolErr(&p, "sharing", "%v", err)
			}
			n.Devices = devs
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func poolErr(p *api.NodePool, field, format string, args ...any) error {
	return fmt.Errorf("NodePool %q (%s): %s: %s", p.Name, p.Source, field, fmt.Sprintf(format, args...))
}

func validatePool(p *api.NodePool) error {
	switch {
	case p.Name == "":
		return poolErr(p, "metadata.name", "must not be empty")
	case p.Count < 0:
		return poolErr(p, "count", "must not be negative, got %d", p.Count)
	case p.GPUsPerNode < 0:
		return poolErr(p, "gpusPerNode", "must not be negative, got %d", p.GPUsPerNode)
	case p.GPUsPerNode > 0 && p.GPUModel == "":
		return poolErr(p, "gpuModel", "required when gpusPerNode is %d", p.GPUsPerNode)
	case p.GPUsPerNVLinkDomain < 0:
		return poolErr(p, "gpusPerNVLinkDomain", "must not be negative, got %d", p.GPUsPerNVLinkDomain)
	}
	for k, t := range p.Topology {
		if t.Key == "" {
			return poolErr(p, fmt.Sprintf("topology[%d].key", k), "must not be empty")
		}
		if t.NodesPerDomain <= 0 {
			return poolErr(p, fmt.Sprintf("topology[%d].nodesPerDomain", k), "must be positive, got %d", t.NodesPerDomain)
		}
	}
	if ct := p.CapacityType; ct != "" && ct != api.CapacityOnDemand && ct != api.CapacitySpot && ct != api.CapacityReserved {
		return poolErr(p, "capacityType", "unknown capacity type %q: want %s, %s or %s", ct, api.CapacityOnDemand, api.CapacitySpot, api.CapacityReserved)
	}
	return nil
}

func poolAllocatable(p *api.NodePool) resources.Vector {
	v := resources.Vector{}
	if p.Extra != nil {
		v = p.Extra.Clone()
	}
	v[resources.CPU] = p.CPU
	v[resources.Memory] = p.Memory
	v[resources.Pods] = resources.Amount(p.MaxPods)
	if p.MaxPods == 0 {
		v[resources.Pods] = DefaultMaxPods
	}
	return v
}

func poolLabels(p *api.NodePool, name, ct string, i int, m devices.Model, s devices.Sharing) map[string]string {
	l := copyLabels(p.NodeLabels)
	l[LabelHostname] = name
	l[api.LabelNodePool] = p.Name
	l[api.LabelCapacityType] = ct
	for _, t := range p.Topology {
		l[t.Key] = t.Prefix + strconv.Itoa(i/t.NodesPerDomain)
	}
	if p.GPUsPerNode > 0 {
		l[devices.LabelGPUProduct] = string(m.ID)
		l[devices.LabelGPUCount] = strconv.Itoa(p.GPUsPerNode)
		l[devices.LabelGPUMemory] = strconv.FormatInt(int64(m.Memory), 10)
		if s.Mode == devices.MIG {
			l[devices.LabelMIGConfig] = s.Layout
			l[devices.LabelMIGStrategy] = string(s.MIGStrategy)
		}
	}
	return l
}
