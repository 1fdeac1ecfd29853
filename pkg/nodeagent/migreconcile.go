package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// Reconcile does one step towards the config the node's migprotocol.LabelConfig names and
// returns the resulting status. A passive manager, or a node without the label, only
// reports what the labels say. A config that failed stays failed until the label
// changes or migprotocol.LabelConfigState is removed (so a bad config is not retried, pausing
// operands, on every poll). While GPU pods still run, the status is pending with the
// operands paused; the next call goes on. The error is for failures to read or write
// the Node; everything else is in the status.
func (m *MIGManager) Reconcile(ctx context.Context) (migprotocol.Status, error) {
	meta, err := m.node.ReadNode(ctx)
	if err != nil {
		return migprotocol.Status{}, fmt.Errorf("reading the node: %w", err)
	}
	want := strings.TrimSpace(meta.Labels[migprotocol.LabelConfig])
	observed := migprotocol.Status{Config: want, State: migprotocol.State(meta.Labels[migprotocol.LabelConfigState])}
	if want == "" || m.opts.Passive {
		return observed, nil
	}
	if observed.State == migprotocol.Failed && annotatedConfig(meta.Annotations[migprotocol.AnnotationState]) == want {
		observed.Detail = "unchanged since it failed: " + meta.Annotations[migprotocol.AnnotationState]
		return observed, nil
	}
	r := &migRun{m: m, config: want, labels: meta.Labels, annotation: meta.Annotations[migprotocol.AnnotationState],
		afterReboot: observed.State == migprotocol.Rebooting}
	return r.run(ctx)
}

// annotatedConfig is the config a migprotocol.AnnotationState value is about.
func annotatedConfig(a string) string {
	_, rest, _ := strings.Cut(a, " ")
	name, _, _ := strings.Cut(rest, ":")
	return name
}

// migRun is one Reconcile that changes (or confirms) the layout.
type migRun struct {
	m      *MIGManager
	config string
	// labels and annotation are the node's as this run last wrote them.
	labels      map[string]string
	annotation  string
	afterReboot bool // the state was rebooting: this run follows the reset
}

func (r *migRun) run(ctx context.Context) (migprotocol.Status, error) {
	dynamic := migparted.IsDynamic(r.config)
	if dynamic && !r.m.opts.DRA {
		return r.finish(ctx, migprotocol.Failed, "%s leaves MIG instances to DRA claims, and this agent does not serve the DRA kubelet plugin (--dra): nothing would carve them", r.config)
	}
	spec, err := r.m.opts.Load()
	if err != nil {
		return r.finish(ctx, migprotocol.Failed, "%v", err)
	}
	plan, d, err := resolveMIGConfig(r.m.lib, spec, r.config)
	if err != nil {
		return r.finish(ctx, migprotocol.Failed, "%v", err)
	}
	// The instances on an all-dynamic agent's GPUs belong to prepared claims.
	plan.keepInstances = dynamic && r.m.opts.Carving
	if plan.holds(d) {
		return r.finish(ctx, migprotocol.Success, "")
	}
	if err := r.pause(ctx); err != nil {
		return migprotocol.Status{}, err
	}
	n, err := r.m.pods.GPUPods(ctx)
	if err != nil {
		return r.finish(ctx, migprotocol.Failed, "counting GPU pods: %v", err)
	}
	if n > 0 {
		return r.status(ctx, migprotocol.Pending, "%d GPU pods still run on the node; operands paused", n)
	}
	if _, err := r.status(ctx, migprotocol.Pending, "applying"); err != nil {
		return migprotocol.Status{}, err
	}
	return r.apply(ctx, plan)
}

// apply changes the GPUs and reads them back.
func (r *migRun) apply(ctx context.Context, plan migPlan) (migprotocol.Status, error) {
	if err := plan.apply(r.m.lib); err != nil {
		if errors.Is(err, ErrResetRequired) {
			return r.resetRequired(ctx, err)
		}
		return r.finish(ctx, migprotocol.Failed, "%v", err)
	}
	d, err := Discover(r.m.lib, devices.Sharing{})
	if err != nil {
		return r.finish(ctx, migprotocol.Failed, "reading back: %v", err)
	}
	if msg := plan.mismatch(d); msg != "" {
		return r.finish(ctx, migprotocol.Failed, "%s", msg)
	}
	return r.finish(ctx, migprotocol.Success, "")
}

// resetRequired handles a MIG mode change NVML left pending. Gantry reboots only when
// configured to (MIGOptions.Reboot); the operands stay paused across the reboot, and the
// run after it fails the change if the mode still did not take effect.
func (r *migRun) resetRequired(ctx context.Context, cause error) (migprotocol.Status, error) {
	switch {
	case r.afterReboot:
		return r.finish(ctx, migprotocol.Failed, "MIG mode change did not take effect after rebooting: %v", cause)
	case r.m.opts.Reboot == nil:
		return r.finish(ctx, migprotocol.Failed, "%v; the agent does not reboot nodes (--mig-reboot-command): reset the GPUs or reboot the node, then remove the %s label to retry", cause, migprotocol.LabelConfigState)
	}
	st, err := r.status(ctx, migprotocol.Rebooting, "%v", cause)
	if err != nil {
		return st, err
	}
	if err := r.m.opts.Reboot.Reboot(ctx); err != nil {
		return r.finish(ctx, migprotocol.Failed, "rebooting for a GPU reset: %v", err)
	}
	return st, nil
}

// pause stops the deployed operands (reporting it once per change, not on every poll
// while GPU pods drain).
func (r *migRun) pause(ctx context.Context) error {
	already := r.labels[migprotocol.LabelConfigState] == string(migprotocol.Pending) && annotatedConfig(r.annotation) == r.config
	if !already {
		if _, err := r.status(ctx, migprotocol.Pending, "pausing GPU operands"); err != nil {
			return err
		}
	}
	set := pauseLabels(r.labels)
	if len(set) == 0 {
		return nil
	}
	if err := r.m.node.SetLabels(ctx, set); err != nil {
		return fmt.Errorf("pausing GPU operands: %w", err)
	}
	r.labels = withLabels(r.labels, set)
	return nil
}

// finish resumes the paused operands and reports the final state.
func (r *migRun) finish(ctx context.Context, state migprotocol.State, format string, args ...any) (migprotocol.Status, error) {
	if set := resumeLabels(r.labels); len(set) > 0 {
		if err := r.m.node.SetLabels(ctx, set); err != nil {
			return migprotocol.Status{Config: r.config, State: state, Detail: fmt.Sprintf(format, args...)}, fmt.Errorf("resuming GPU operands: %w", err)
		}
		r.labels = withLabels(r.labels, set)
	}
	return r.status(ctx, state, format, args...)
}

// status reports a state unless the node already shows exactly it.
func (r *migRun) status(ctx context.Context, state migprotocol.State, format string, args ...any) (migprotocol.Status, error) {
	st := migprotocol.Status{Config: r.config, State: state, Detail: fmt.Sprintf(format, args...)}
	if r.labels[migprotocol.LabelConfigState] == string(state) && r.annotation == st.Annotation() {
		return st, nil
	}
	if err := r.m.node.SetMIGStatus(ctx, st); err != nil {
		return st, fmt.Errorf("reporting MIG status %q: %w", st.Annotation(), err)
	}
	r.labels = withLabels(r.labels, map[string]string{migprotocol.LabelConfigState: string(state)})
	r.annotation = st.Annotation()
	return st, nil
}
