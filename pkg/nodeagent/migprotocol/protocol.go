package migprotocol

import "github.com/gantry-sched/gantry/pkg/devices"

// The GPU Operator's MIG protocol, as NVIDIA's MIG manager speaks it: the desired config
// is the node label LabelConfig (a config name of the mig-parted file), progress is
// the label LabelConfigState, and operands are paused through their deploy labels.
const (
	// LabelConfig is the desired state: a config name of the mig-parted file. Whoever
	// asks for a layout writes it; a MIG manager only reads it.
	LabelConfig = devices.LabelMIGConfig
	// LabelConfigState is the progress: pending, rebooting, success or failed.
	LabelConfigState = "nvidia.com/mig.config.state"
	// LabelDeployPrefix starts the GPU Operator's operand labels
	// (nvidia.com/gpu.deploy.device-plugin=true); operand DaemonSets select nodes by them.
	LabelDeployPrefix = "nvidia.com/gpu.deploy."
	// OperandPaused is the deploy-label value that stops an operand for a MIG change.
	OperandPaused = "paused-for-mig-change"
	// AnnotationState is Gantry's detail: "<state> <config>[: detail]".
	AnnotationState = "gantry.dev/mig-config-state"
	// ConditionLayout is the node condition type mirroring the state.
	ConditionLayout = "GantryMIGLayout"
)

// Operands are the GPU Operator components paused around a MIG change, by deploy-label
// suffix: the ones NVIDIA's MIG manager pauses.
func Operands() []string {
	return []string{"device-plugin", "gpu-feature-discovery", "dcgm-exporter", "dcgm", "nvsm", "client"}
}

// State is the value of LabelConfigState.
type State string

const (
	Pending   State = "pending"   // operands paused, waiting for GPU pods to end, or changing
	Rebooting State = "rebooting" // a GPU reset is needed; the node is being rebooted
	Success   State = "success"   // the GPUs have the config (read back)
	Failed    State = "failed"    // bad config or NVML refused a step; the detail says which
)

// Status is one progress report.
type Status struct {
	Config string
	State  State
	Detail string
}

// Annotation renders the status for AnnotationState.
func (s Status) Annotation() string {
	if s.Detail == "" {
		return string(s.State) + " " + s.Config
	}
	return string(s.State) + " " + s.Config + ": " + s.Detail
}
