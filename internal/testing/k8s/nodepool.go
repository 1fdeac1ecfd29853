package k8s

import (
	"fmt"
	"strings"
)

// NodePoolWrapper builds a Gantry NodePool manifest: count nodes of one shape.
type NodePoolWrapper struct {
	name, model, layout, cpu, memory string
	count, perNode                   int
	labels                           map[string]string
}

// MakeNodePool starts a pool of count nodes with 64 CPUs and 512Gi memory each and no GPUs.
func MakeNodePool(name string, count int) *NodePoolWrapper {
	return &NodePoolWrapper{name: name, count: count, cpu: "64", memory: "512Gi"}
}

// GPUs gives each node perNode GPUs of model, offered whole.
func (p *NodePoolWrapper) GPUs(model string, perNode int) *NodePoolWrapper {
	p.model, p.perNode = model, perNode
	return p
}

// MIG cuts every GPU into a named layout (e.g. all-1g.10gb), advertised mixed.
func (p *NodePoolWrapper) MIG(layout string) *NodePoolWrapper { p.layout = layout; return p }

func (p *NodePoolWrapper) CPU(q string) *NodePoolWrapper    { p.cpu = q; return p }
func (p *NodePoolWrapper) Memory(q string) *NodePoolWrapper { p.memory = q; return p }
func (p *NodePoolWrapper) Label(k, v string) *NodePoolWrapper {
	set(&p.labels, k, v)
	return p
}

// YAML renders the NodePool manifest.
func (p *NodePoolWrapper) YAML() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: gantry.dev/v1alpha1\nkind: NodePool\nmetadata:\n  name: %s\nspec:\n", p.name)
	fmt.Fprintf(&s, "  count: %d\n  cpu: %q\n  memory: %s\n", p.count, p.cpu, p.memory)
	writeMap(&s, "  labels", p.labels, "    ")
	if p.model != "" {
		fmt.Fprintf(&s, "  gpu:\n    model: %s\n    perNode: %d\n", p.model, p.perNode)
		if p.layout != "" {
			fmt.Fprintf(&s, "    sharing:\n      mode: mig\n      migStrategy: mixed\n      layout: %s\n", p.layout)
		}
	}
	return s.String()
}
