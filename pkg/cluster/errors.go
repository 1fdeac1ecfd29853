package cluster

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// ShortError is a pod refused by a node for lack of free non-GPU resources. Placement
// probes an overlay many times per decision and reads few of these, so the sentence
// is made only when the error is rendered.
type ShortError struct {
	Pod  PodRef
	Node string
	Use  resources.Vector // what the pod charges the node
	Free resources.Vector // what the node had free
}

func (e *ShortError) Error() string {
	_, short := e.Use.Fits(e.Free)
	return fmt.Sprintf("pod %s: node %s: not enough free %v (requests %s, free %s)", e.Pod, e.Node, short, e.Use, e.Free)
}

// PodError is a pod whose devices a node refused (the device layer says why).
type PodError struct {
	Pod  PodRef
	Node string
	Err  error
}

func (e *PodError) Error() string { return fmt.Sprintf("pod %s: node %s: %v", e.Pod, e.Node, e.Err) }
func (e *PodError) Unwrap() error { return e.Err }
