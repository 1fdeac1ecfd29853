package nodeagent

import (
	"context"
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

// Node annotations and condition of the MIG manager.
const (
	// AnnotationMIGLayout is the trigger: the layout the scheduler wants on the node, a
	// devices layout name ("all-1g.5gb", "all-balanced", "all-disabled") or
	// "custom:<profile>,<profile>,..." applied to every GPU.
	AnnotationMIGLayout = "gantry.dev/mig-layout"
	// AnnotationMIGState is the progress: one of the MIGState values, then ": <detail>".
	AnnotationMIGState = "gantry.dev/mig-layout-state"
	// ConditionMIGLayout is the node condition type mirroring the state.
	ConditionMIGLayout = "GantryMIGLayout"
)

// MIGState is the MIG manager's progress on a layout.
type MIGState string

const (
	MIGPending  MIGState = "pending"  // waiting for the node to drain of GPU pods
	MIGApplying MIGState = "applying" // destroying and creating instances
	MIGApplied  MIGState = "applied"  // the GPUs have the layout (read back)
	MIGRejected MIGState = "rejected" // the device model says the layout is invalid
	MIGFailed   MIGState = "failed"   // NVML refused a step; the detail says which
)

// MIGStatus is one progress report.
type MIGStatus struct {
	Layout string
	State  MIGState
	Detail string
}

// Annotation renders the status for AnnotationMIGState.
func (s MIGStatus) Annotation() string {
	if s.Detail == "" {
		return string(s.State) + " " + s.Layout
	}
	return string(s.State) + " " + s.Layout + ": " + s.Detail
}

// NodeUpdater writes the agent's results to the Node object (labels, annotations,
// conditions). Production uses the API server; tests a fake.
type NodeUpdater interface {
	SetLabels(ctx context.Context, labels map[string]string) error
	SetMIGStatus(ctx context.Context, status MIGStatus) error
	SetUnhealthyDevices(ctx context.Context, ids []string) error
}

// GPUPodCounter says how many pods using GPUs run on the node.
type GPUPodCounter interface {
	GPUPods(ctx context.Context) (int, error)
}

// MIGManager applies MIG layouts through NVML.
type MIGManager struct {
	lib      nvml.Interface
	pods     GPUPodCounter
	node     NodeUpdater
	strategy devices.MIGStrategy
}

// NewMIGManager makes a manager; strategy is the device plugin's MIG strategy.
func NewMIGManager(lib nvml.Interface, pods GPUPodCounter, node NodeUpdater, strategy devices.MIGStrategy) *MIGManager {
	return &MIGManager{lib: lib, pods: pods, node: node, strategy: strategy}
}

// ParseLayout reads an AnnotationMIGLayout value into a MIG sharing config.
func ParseLayout(v string, strategy devices.MIGStrategy) (devices.Sharing, error) {
	v = strings.TrimSpace(v)
	s := devices.Sharing{Mode: devices.MIG, MIGStrategy: strategy, Layout: v}
	if rest, ok := strings.CutPrefix(v, devices.LayoutCustom+":"); ok {
		var profiles []string
		for _, p := range strings.Split(rest, ",") {
			if p = strings.TrimSpace(p); p != "" {
				profiles = append(profiles, p)
			}
		}
		s.Layout, s.CustomProfiles = devices.LayoutCustom, [][]string{profiles}
	}
	if v == "" {
		return s, fmt.Errorf("annotation %s: empty layout", AnnotationMIGLayout)
	}
	return s, nil
}

// Apply brings the node's GPUs to layout. It returns the final status (rejected,
// pending, applied or failed: not applying is a value, not an error) after reporting
// each step through the NodeUpdater; the error is for failures to report.
func (m *MIGManager) Apply(ctx context.Context, layout string) (MIGStatus, error) {
	st := m.apply(ctx, layout)
	if err := m.node.SetMIGStatus(ctx, st); err != nil {
		return st, fmt.Errorf("reporting MIG status %q: %w", st.Annotation(), err)
	}
	if st.State == MIGApplied {
		if err := m.node.SetLabels(ctx, map[string]string{LabelMIGConfig: layoutLabel(layout)}); err != nil {
			return st, fmt.Errorf("labelling the node with MIG config %q: %w", layout, err)
		}
	}
	return st, nil
}

// layoutLabel makes a layout usable as a label value ("custom:a,b" -> "custom").
func layoutLabel(layout string) string {
	name, _, _ := strings.Cut(layout, ":")
	return name
}

func (m *MIGManager) apply(ctx context.Context, layout string) MIGStatus {
	st := MIGStatus{Layout: layout}
	fail := func(state MIGState, format string, args ...any) MIGStatus {
		st.State, st.Detail = state, fmt.Sprintf(format, args...)
		return st
	}
	sharing, err := ParseLayout(layout, m.strategy)
	if err != nil {
		return fail(MIGRejected, "%v", err)
	}
	d, err := Discover(m.lib, devices.Sharing{})
	if err != nil {
		return fail(MIGFailed, "discovery: %v", err)
	}
	if !d.MIGCapable {
		return fail(MIGRejected, "GPU model %s does not support MIG", d.Model.ID)
	}
	if err := devices.ValidateSharing(d.Model, sharing); err != nil {
		return fail(MIGRejected, "%v", err)
	}
	want, err := d.Model.ResolveLayout(sharing, len(d.GPUs))
	if err != nil {
		return fail(MIGRejected, "%v", err)
	}
	n, err := m.pods.GPUPods(ctx)
	if err != nil {
		return fail(MIGFailed, "counting GPU pods: %v", err)
	}
	if n > 0 {
		return fail(MIGPending, "%d GPU pods still run on the node", n)
	}
	if err := m.node.SetMIGStatus(ctx, MIGStatus{Layout: layout, State: MIGApplying}); err != nil {
		return fail(MIGFailed, "reporting progress: %v", err)
	}
	for i, g := range d.GPUs {
		if err := applyGPU(m.lib, d.Model, g.Index, want[i]); err != nil {
			return fail(MIGFailed, "GPU %d: %v", g.Index, err)
		}
	}
	return m.verify(layout, want)
}

// verify reads the GPUs back and compares them with the wanted instances.
func (m *MIGManager) verify(layout string, want [][]devices.Instance) MIGStatus {
	got, err := Discover(m.lib, devices.Sharing{})
	if err != nil {
		return MIGStatus{Layout: layout, State: MIGFailed, Detail: "reading back: " + err.Error()}
	}
	for i, g := range got.GPUs {
		if fmt.Sprint(g.Instances) != fmt.Sprint(want[i]) {
			return MIGStatus{Layout: layout, State: MIGFailed, Detail: fmt.Sprintf("GPU %d reads back %v, want %v", g.Index, g.Instances, want[i])}
		}
	}
	return MIGStatus{Layout: layout, State: MIGApplied}
}

// Reconcile applies the layout the node's AnnotationMIGLayout asks for unless the
// state annotation says it is already applied, or was rejected (a rejected layout
// stays rejected until the annotation changes). Pending and failed layouts are tried
// again. ok is false when there was nothing to do.
func (m *MIGManager) Reconcile(ctx context.Context, annotations map[string]string) (st MIGStatus, ok bool, err error) {
	want := strings.TrimSpace(annotations[AnnotationMIGLayout])
	if want == "" {
		return MIGStatus{}, false, nil
	}
	state := annotations[AnnotationMIGState]
	if state == string(MIGApplied)+" "+want || strings.HasPrefix(state, string(MIGRejected)+" "+want+":") {
		return MIGStatus{}, false, nil
	}
	st, err = m.Apply(ctx, want)
	return st, true, err
}
