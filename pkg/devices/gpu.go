package devices

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// GPU is one physical GPU of a node, as configured. Healthy must be set for the GPU to
// offer anything (NewGPUs sets it).
type GPU struct {
	Index int
	UUID  string
	Model ModelID
	// NVLinkDomain and PCIeSwitch group GPUs that talk fast to each other; multi-GPU
	// picks stay inside one when they can.
	NVLinkDomain int
	PCIeSwitch   int
	Sharing      Sharing
	// Instances is the MIG layout (Sharing.Mode == MIG); empty means MIG disabled and the
	// GPU is offered whole, or, under the dynamic layout (LayoutDynamic), that instances
	// are carved as claims are allocated.
	Instances []Instance
	Healthy   bool
}

// gpusPerPCIeSwitch is the usual HGX/DGX arrangement: two GPUs behind each PCIe switch.
const gpusPerPCIeSwitch = 2

// NewGPUs builds count identical, healthy GPUs of model m shared as s, with MIG layouts
// resolved to concrete instances, NVLink domains of perNVLinkDomain GPUs (0: one domain
// for the node) and two GPUs per PCIe switch.
func NewGPUs(m Model, count int, s Sharing, perNVLinkDomain int) ([]GPU, error) {
	if count < 0 {
		return nil, fmt.Errorf("GPU count %d is negative", count)
	}
	if perNVLinkDomain < 0 {
		return nil, fmt.Errorf("GPUs per NVLink domain %d is negative", perNVLinkDomain)
	}
	if err := ValidateSharing(m, s); err != nil {
		return nil, err
	}
	layouts, err := m.ResolveLayout(s, count)
	if err != nil {
		return nil, err
	}
	gpus := make([]GPU, count)
	for i := range gpus {
		domain := 0
		if perNVLinkDomain > 0 {
			domain = i / perNVLinkDomain
		}
		gpus[i] = GPU{
			Index:        i,
			Model:        m.ID,
			NVLinkDomain: domain,
			PCIeSwitch:   i / gpusPerPCIeSwitch,
			Sharing:      s,
			Instances:    layouts[i],
			Healthy:      true,
		}
	}
	return gpus, nil
}

// unitKind is what a GPU hands out, derived from its sharing mode and layout.
type unitKind uint8

const (
	unitWhole   unitKind = iota // exclusive, or MIG mode with MIG disabled
	unitMIG                     // MIG instances and time-sliced MIG replicas
	unitReplica                 // time-slicing or MPS replicas
	unitShare                   // fractional shares (and whole GPUs when entirely free)
	unitDynamic                 // MIG instances carved at allocation, or the GPU whole (dynamic.go)
)

func kindOf(instances int, s Sharing) unitKind {
	switch s.EffectiveMode() {
	case MIG:
		if s.DynamicMIG() {
			return unitDynamic
		}
		if instances > 0 {
			return unitMIG
		}
	case TimeSlicing, MPS:
		return unitReplica
	case Fractional:
		return unitShare
	}
	return unitWhole
}

// replicaResource is the name replicas are advertised under.
func replicaResource(s Sharing) resources.Name {
	if s.RenameByDefault {
		return resources.NvidiaGPUShared
	}
	return resources.NvidiaGPU
}

// migResource is the name a MIG instance is advertised under.
func migResource(s Sharing, profile string) resources.Name {
	if s.EffectiveMIGStrategy() == MIGSingle {
		return resources.NvidiaGPU
	}
	return resources.MIGResource(profile)
}

// replicaMilli is one replica's share in the common unit (rounded down).
func replicaMilli(replicas int) resources.MilliGPU {
	if replicas <= 0 {
		return resources.MilliPerGPU
	}
	return resources.MilliPerGPU / resources.MilliGPU(replicas)
}
