package migprotocol

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
)

// Requester asks nodes for a MIG layout the way the GPU Operator's users do: it sets
// the node label nvidia.com/mig.config to a config of the mig-parted file and waits for
// nvidia.com/mig.config.state to say success or failed. NVIDIA's MIG manager and
// Gantry's act on the label alike, so the requester drives either.
type Requester struct {
	Client kubernetes.Interface
	// Spec is the mig-parted file the nodes' MIG manager uses: a config it lacks is
	// refused before the node is touched.
	Spec *migparted.Spec
	// Poll is how often Wait reads the node (2s when zero).
	Poll time.Duration
}

// Request sets node's desired config. A new config also removes the state label in the
// same patch, so a success left by the previous config is not taken for this one's. The
// same config again changes nothing: the MIG manager reacts to label changes only.
func (r Requester) Request(ctx context.Context, node, config string) error {
	if !r.Spec.Has(config) {
		return fmt.Errorf("node %s: MIG config %q is not in %s (configs: %s)", node, config, r.Spec.File, strings.Join(r.Spec.Names(), ", "))
	}
	n, err := r.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("node %s: %w", node, err)
	}
	if n.Labels[LabelConfig] == config {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{
		LabelConfig: config, LabelConfigState: nil,
	}}})
	if err != nil {
		return fmt.Errorf("node %s: encoding patch: %w", node, err)
	}
	if _, err := r.Client.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("node %s: setting %s=%s: %w", node, LabelConfig, config, err)
	}
	return nil
}

// Wait reads node until its state is success or failed for the config it asks for, or
// ctx ends. Failed is an error carrying Gantry's detail when a Gantry manager wrote one.
func (r Requester) Wait(ctx context.Context, node string) (Status, error) {
	poll := r.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		st, done, err := r.status(ctx, node)
		if err != nil || done {
			return st, err
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("node %s: MIG config %s still %q: %w", node, st.Config, st.State, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// status reads the node's MIG state; done when it is final.
func (r Requester) status(ctx context.Context, node string) (Status, bool, error) {
	n, err := r.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return Status{}, false, fmt.Errorf("node %s: %w", node, err)
	}
	st := Status{Config: n.Labels[LabelConfig], State: State(n.Labels[LabelConfigState])}
	if a := n.Annotations[AnnotationState]; strings.HasPrefix(a, string(st.State)+" "+st.Config+": ") {
		st.Detail = strings.TrimPrefix(a, string(st.State)+" "+st.Config+": ")
	}
	switch st.State {
	case Success:
		return st, true, nil
	case Failed:
		return st, true, fmt.Errorf("node %s: MIG config %s failed: %s", node, st.Config, orUnknown(st.Detail))
	}
	return st, false, nil
}

func orUnknown(s string) string {
	if s == "" {
		return "no detail (see the MIG manager's log)"
	}
	return s
}

// RequestAndWait sets the config and waits for its outcome.
func (r Requester) RequestAndWait(ctx context.Context, node, config string) (Status, error) {
	if err := r.Request(ctx, node, config); err != nil {
		return Status{}, err
	}
	return r.Wait(ctx, node)
}
