package nodeagent_test

import (
	"context"
	"maps"
	"sync"

	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// migNode is a Node for the MIG manager: labels and annotations it reads back, and a
// record of every write.
type migNode struct {
	mu          sync.Mutex
	labels      map[string]string
	annotations map[string]string
	// labelWrites are the SetLabels calls in order; states the reported states.
	labelWrites []map[string]string
	states      []migprotocol.State
}

func newMIGNode(labels map[string]string) *migNode {
	return &migNode{labels: maps.Clone(labels), annotations: map[string]string{}}
}

func (n *migNode) ReadNode(context.Context) (nodeagent.NodeMeta, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return nodeagent.NodeMeta{Labels: maps.Clone(n.labels), Annotations: maps.Clone(n.annotations)}, nil
}

func (n *migNode) SetLabels(_ context.Context, l map[string]string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.labels == nil {
		n.labels = map[string]string{}
	}
	maps.Copy(n.labels, l)
	n.labelWrites = append(n.labelWrites, maps.Clone(l))
	return nil
}

func (n *migNode) SetMIGStatus(_ context.Context, s migprotocol.Status) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.labels == nil {
		n.labels = map[string]string{}
	}
	n.labels[migprotocol.LabelConfigState] = string(s.State)
	n.annotations[migprotocol.AnnotationState] = s.Annotation()
	n.states = append(n.states, s.State)
	return nil
}

func (n *migNode) label(k string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.labels[k]
}

// rebooter counts reboots.
type rebooter struct{ calls int }

func (r *rebooter) Reboot(context.Context) error { r.calls++; return nil }

// podCounts answers with the next count each call, the last one thereafter.
type podCounts struct{ counts []int }

func (p *podCounts) GPUPods(context.Context) (int, error) {
	n := p.counts[0]
	if len(p.counts) > 1 {
		p.counts = p.counts[1:]
	}
	return n, nil
}
