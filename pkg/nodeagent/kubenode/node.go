package kubenode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// Node writes to one Node object. Now is the clock for condition transition times.
type Node struct {
	Client kubernetes.Interface
	Name   string
	Now    func() time.Time
}

var (
	_ nodeagent.NodeUpdater   = (*Node)(nil)
	_ nodeagent.MIGNode       = (*Node)(nil)
	_ nodeagent.GPUPodCounter = (*Node)(nil)
)

// ReadNode reads the Node's labels and annotations.
func (n *Node) ReadNode(ctx context.Context) (nodeagent.NodeMeta, error) {
	node, err := n.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return nodeagent.NodeMeta{}, fmt.Errorf("reading node %s: %w", n.Name, err)
	}
	return nodeagent.NodeMeta{Labels: node.Labels, Annotations: node.Annotations}, nil
}

// SetLabels merges labels into the Node's.
func (n *Node) SetLabels(ctx context.Context, labels map[string]string) error {
	return n.patch(ctx, map[string]any{"metadata": map[string]any{"labels": labels}}, "")
}

// SetMIGStatus writes the GPU Operator's state label and Gantry's detail annotation in
// one patch (so readers never see one without the other), then the GantryMIGLayout
// condition.
func (n *Node) SetMIGStatus(ctx context.Context, st migprotocol.Status) error {
	if err := n.patch(ctx, map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{migprotocol.LabelConfigState: string(st.State)},
		"annotations": map[string]string{migprotocol.AnnotationState: st.Annotation()},
	}}, ""); err != nil {
		return err
	}
	status := corev1.ConditionFalse
	if st.State == migprotocol.Success {
		status = corev1.ConditionTrue
	}
	cond := corev1.NodeCondition{
		Type: migprotocol.ConditionLayout, Status: status, Reason: reasonOf(st.State),
		Message: st.Annotation(), LastHeartbeatTime: metav1.NewTime(n.Now()), LastTransitionTime: metav1.NewTime(n.Now()),
	}
	// Node conditions merge by type under a strategic merge patch.
	return n.patch(ctx, map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}}, "status")
}

// reasonOf turns a state into a CamelCase condition reason ("pending" -> "MIGPending").
func reasonOf(s migprotocol.State) string {
	str := string(s)
	if str == "" {
		return "MIGUnknown"
	}
	return "MIG" + strings.ToUpper(str[:1]) + str[1:]
}

// SetUnhealthyDevices writes (or, for none, removes) devices.AnnotationUnhealthyDevices.
func (n *Node) SetUnhealthyDevices(ctx context.Context, ids []string) error {
	var v any // nil removes the annotation
	if len(ids) > 0 {
		v = strings.Join(ids, ",")
	}
	return n.patch(ctx, map[string]any{"metadata": map[string]any{"annotations": map[string]any{devices.AnnotationUnhealthyDevices: v}}}, "")
}

// SetReplicatedDevices writes (or, when nothing is replicated, removes)
// devices.AnnotationReplicatedDevices.
func (n *Node) SetReplicatedDevices(ctx context.Context, r devices.ReplicatedDevices) error {
	var v any
	if len(r) > 0 {
		v = r.String()
	}
	return n.patch(ctx, map[string]any{"metadata": map[string]any{"annotations": map[string]any{devices.AnnotationReplicatedDevices: v}}}, "")
}

func (n *Node) patch(ctx context.Context, body map[string]any, sub string) error {
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("node %s: encoding patch: %w", n.Name, err)
	}
	var subs []string
	if sub != "" {
		subs = []string{sub}
	}
	if _, err := n.Client.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}, subs...); err != nil {
		return fmt.Errorf("node %s: patching %s: %w", n.Name, strings.Join(append([]string{"object"}, subs...), "/"), err)
	}
	return nil
}

// GPUPods counts the node's pods that are not finished and hold a GPU: through an
// extended GPU resource, or through a DRA claim allocated a GPU device of this node.
func (n *Node) GPUPods(ctx context.Context) (int, error) {
	pods, err := n.pods(ctx)
	if err != nil {
		return 0, err
	}
	count := 0
	for i := range pods {
		p := &pods[i]
		if finished(p) {
			continue
		}
		held := requestsGPU(p, "")
		if !held {
			if held, err = n.holdsDRAGPU(ctx, p); err != nil {
				return 0, err
			}
		}
		if held {
			count++
		}
	}
	return count, nil
}

func (n *Node) pods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := n.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
	if err != nil {
		return nil, fmt.Errorf("listing pods on node %s: %w", n.Name, err)
	}
	// Filter again: not every client (caches, fakes) applies field selectors.
	out := list.Items[:0]
	for _, p := range list.Items {
		if p.Spec.NodeName == n.Name {
			out = append(out, p)
		}
	}
	return out, nil
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
