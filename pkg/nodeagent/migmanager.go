package nodeagent

import (
	"context"
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// ErrResetRequired is wrapped by a MIG mode change that NVML left pending until the GPU
// is reset.
var ErrResetRequired = errors.New("MIG mode change pending until the GPU is reset")

// NodeUpdater writes the agent's results to the Node object (labels, annotations,
// conditions). Production uses the API server; tests a fake.
type NodeUpdater interface {
	SetLabels(ctx context.Context, labels map[string]string) error
	// SetMIGStatus writes migprotocol.LabelConfigState, migprotocol.AnnotationState and the
	// migprotocol.ConditionLayout condition.
	SetMIGStatus(ctx context.Context, status migprotocol.Status) error
	SetUnhealthyDevices(ctx context.Context, ids []string) error
}

// NodeMeta is what the MIG manager reads of its Node.
type NodeMeta struct {
	Labels      map[string]string
	Annotations map[string]string
}

// MIGNode is the Node as the MIG manager reads and writes it.
type MIGNode interface {
	ReadNode(ctx context.Context) (NodeMeta, error)
	SetLabels(ctx context.Context, labels map[string]string) error
	SetMIGStatus(ctx context.Context, status migprotocol.Status) error
}

// GPUPodCounter says how many pods using GPUs run on the node.
type GPUPodCounter interface {
	GPUPods(ctx context.Context) (int, error)
}

// Rebooter reboots the node (or resets its GPUs) so a pending MIG mode takes effect.
type Rebooter interface {
	Reboot(ctx context.Context) error
}

// MIGOptions configure a MIGManager.
type MIGOptions struct {
	// Load reads the mig-parted config file on every change, so an edited ConfigMap
	// takes effect; nil uses the embedded default.
	Load func() (*migparted.Spec, error)
	// Passive managers only read the label and state (NVIDIA's MIG manager owns the
	// node): they never pause operands, touch a GPU or write the state.
	Passive bool
	// Reboot, when set, is called after the state is set to rebooting for a change that
	// needs a GPU reset; nil fails such a change with the reason instead.
	Reboot Rebooter
	// DRA says the agent serves the DRA kubelet plugin, the only thing that carves
	// instances under migparted.Dynamic; without it that config fails with the reason.
	DRA bool
	// Carving says the agent runs all-dynamic (it read migparted.Dynamic at start, with
	// DRA): the instances on its MIG GPUs are claims' carvings, so under migparted.Dynamic
	// the manager only turns MIG mode on and never destroys an instance. Without it,
	// migparted.Dynamic is a change from a fixed layout, applied as MIG on without
	// instances (clearing the old layout's).
	Carving bool
}

// MIGManager brings the node's GPUs to the mig-parted config the node's migprotocol.LabelConfig
// names. It never writes migprotocol.LabelConfig: whoever asks for a config owns that label.
type MIGManager struct {
	lib  nvml.Interface
	pods GPUPodCounter
	node MIGNode
	opts MIGOptions
}

// NewMIGManager makes a manager over an initialised NVML library.
func NewMIGManager(lib nvml.Interface, pods GPUPodCounter, node MIGNode, opts MIGOptions) *MIGManager {
	if opts.Load == nil {
		opts.Load = migparted.Default
	}
	return &MIGManager{lib: lib, pods: pods, node: node, opts: opts}
}
