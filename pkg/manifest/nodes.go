package manifest

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// node keeps a v1 Node as `kubectl get nodes -o yaml` prints it (status included: it
// holds the capacity) and checks it the way the cluster model will read it.
func (l *loader) node(d document, c errs) {
	var in corev1.Node
	if !decode(d, &in, true, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	n := api.Node{Object: in, Source: c.src}
	if _, err := cluster.NodeFromKube(n); err != nil {
		addClusterError(c, "", err)
		return
	}
	if l.register("Node", metaOf(in.ObjectMeta, c.src, ""), c) {
		l.objs.Nodes = append(l.objs.Nodes, n)
	}
}

func (l *loader) nodePool(d document, c errs) {
	var in v1alpha1.NodePool
	if !decode(d, &in, false, c) {
		return
	}
	clusterScoped(in.ObjectMeta, c)
	p, ok := convertPool(in.ObjectMeta.Name, in.Spec, "spec", c)
	p.Meta = metaOf(in.ObjectMeta, c.src, "")
	if !ok {
		return
	}
	nodes, err := cluster.ExpandPool(p)
	if err != nil {
		addClusterError(c, "spec", err)
		return
	}
	if l.register("NodePool", p.Meta, c) {
		l.objs.NodePools = append(l.objs.NodePools, p)
		for _, n := range nodes {
			l.nodeNames[n.Name] = true
		}
	}
}

// convertPool converts a pool spec and checks its GPU model and sharing. ok is false
// when an error was reported.
func convertPool(name string, s v1alpha1.NodePoolSpec, path string, c errs) (api.NodePool, bool) {
	before := len(*c.list)
	p := api.NodePool{
		Meta:         api.Meta{Name: name},
		Count:        s.Count,
		MaxPods:      s.MaxPods,
		NodeLabels:   s.Labels,
		Taints:       s.Taints,
		CapacityType: s.CapacityType,
	}
	if s.Count < 0 {
		c.add(path+".count", "%d is negative", s.Count)
	}
	if s.MaxPods < 0 {
		c.add(path+".maxPods", "%d is negative", s.MaxPods)
	}
	p.CPU, _ = parseQuantity(resources.CPU, s.CPU, path+".cpu", c)
	p.Memory, _ = parseQuantity(resources.Memory, s.Memory, path+".memory", c)
	if s.CPU == "" || s.Memory == "" {
		c.add(path, "cpu and memory per node are required")
	}
	if len(s.ExtraResources) > 0 {
		p.Extra = resources.Vector{}
		for _, k := range sortedKeys(s.ExtraResources) {
			p.Extra[resources.Name(k)], _ = parseQuantity(resources.Name(k), s.ExtraResources[k], path+".extraResources["+k+"]", c)
		}
	}
	for i, t := range s.Taints {
		checkTaint(t, joinIndex(path+".taints", i), c)
	}
	switch s.CapacityType {
	case "", api.CapacityOnDemand, api.CapacitySpot, api.CapacityReserved:
	default:
		c.add(path+".capacityType", "unknown capacity type %q: want on-demand, spot or reserved", s.CapacityType)
	}
	for i, t := range s.Topology {
		p.Topology = append(p.Topology, api.TopologyLevelSpec{Key: t.Key, NodesPerDomain: t.NodesPerDomain, Prefix: t.Prefix})
		if t.Key == "" || t.NodesPerDomain <= 0 {
			c.add(joinIndex(path+".topology", i), "needs a key and a positive nodesPerDomain")
		}
	}
	if g := s.GPU; g != nil {
		p.GPUModel, p.GPUsPerNode, p.GPUsPerNVLinkDomain = g.Model, g.PerNode, g.NVLinkDomainSize
		p.Sharing = sharing(g.Sharing, path+".gpu.sharing", c)
		checkGPU(p, path+".gpu", c)
	}
	return p, len(*c.list) == before
}

// sharing converts the wire sharing block (nil means exclusive whole GPUs).
func sharing(s *v1alpha1.GPUSharing, path string, c errs) devices.Sharing {
	if s == nil {
		return devices.Sharing{Mode: devices.Exclusive}
	}
	out := devices.Sharing{
		Mode: devices.SharingMode(s.Mode), MIGStrategy: devices.MIGStrategy(s.MIGStrategy), Layout: s.Layout,
		CustomProfiles: s.CustomProfiles, Replicas: s.Replicas, RenameByDefault: s.RenameByDefault,
	}
	if out.Mode == "" {
		out.Mode = devices.Exclusive
	}
	if s.MPSMemoryLimit != "" {
		if b, ok := parseQuantity(resources.Memory, s.MPSMemoryLimit, path+".mpsMemoryLimit", c); ok {
			out.MPSMemoryLimit = resources.MiB(b / (1 << 20))
		}
	}
	return out
}

// checkGPU checks the model name and the sharing config against the model's MIG rules.
func checkGPU(p api.NodePool, path string, c errs) {
	if p.GPUsPerNode < 0 {
		c.add(path+".perNode", "%d is negative", p.GPUsPerNode)
	}
	m, err := devices.LookupModel(p.GPUModel)
	if err != nil {
		c.add(path+".model", "%s", err)
		return
	}
	if err := devices.ValidateSharing(m, p.Sharing); err != nil {
		c.add(sharingField(path, err), "%s", sharingMsg(err))
		return
	}
	if p.Sharing.Mode == devices.MIG && p.GPUsPerNode > 0 {
		if _, err := m.ResolveLayout(p.Sharing, p.GPUsPerNode); err != nil {
			c.add(sharingField(path, err), "%s", sharingMsg(err))
		}
	}
}

// sharingField maps a devices error "sharing.layout: ..." onto the manifest's path.
func sharingField(path string, err error) string {
	f, _, ok := strings.Cut(err.Error(), ": ")
	if ok && strings.HasPrefix(f, "sharing") && !strings.Contains(f, " ") {
		return path + "." + f
	}
	return path + ".sharing"
}

func sharingMsg(err error) string {
	f, msg, ok := strings.Cut(err.Error(), ": ")
	if ok && strings.HasPrefix(f, "sharing") && !strings.Contains(f, " ") {
		return msg
	}
	return err.Error()
}

// addClusterError reports an error of the cluster package, whose messages read
// `node "n" (file:line): field: message` or `NodePool "p" (file:line): field: message`,
// under our own field path (prefix + field) so that it gets the field's line.
func addClusterError(c errs, prefix string, err error) {
	s := err.Error()
	_, rest, found := strings.Cut(s, "): ")
	if found && (strings.HasPrefix(s, "node \"") || strings.HasPrefix(s, "NodePool \"")) {
		if field, msg, ok := strings.Cut(rest, ": "); ok && !strings.Contains(field, " ") {
			c.add(joinPath(prefix, field), "%s", msg)
			return
		}
	}
	c.add(prefix, "%s", s)
}

// joinPath joins a prefix and a field path that may start with a bracket.
func joinPath(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case strings.HasPrefix(field, "["):
		return prefix + field
	}
	return prefix + "." + field
}
