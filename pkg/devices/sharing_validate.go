package devices

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// EffectiveMode is the sharing mode with the default applied: an empty mode is Exclusive.
func (s Sharing) EffectiveMode() SharingMode {
	if s.Mode == "" {
		return Exclusive
	}
	return s.Mode
}

// EffectiveMIGStrategy is the MIG strategy with the GPU Operator's default (single).
func (s Sharing) EffectiveMIGStrategy() MIGStrategy {
	if s.MIGStrategy == "" {
		return MIGSingle
	}
	return s.MIGStrategy
}

// ReplicaMemory is the GPU memory one time-sliced or MPS replica of a model-m GPU
// offers: the MPS limit when set, else an equal split.
func (s Sharing) ReplicaMemory(m Model) resources.MiB {
	if s.EffectiveMode() == MPS && s.MPSMemoryLimit > 0 {
		return s.MPSMemoryLimit
	}
	if s.Replicas <= 0 {
		return m.Memory
	}
	return m.Memory / resources.MiB(s.Replicas)
}

// ValidateSharing checks a sharing config against a GPU model: a known mode, MIG only on
// MIG-capable models with a layout that packs on every GPU (and one profile under the
// single strategy), at least one replica for time-slicing and MPS, and an MPS memory
// limit that fits the GPU. Errors name the field.
func ValidateSharing(m Model, s Sharing) error {
	switch s.EffectiveMode() {
	case Exclusive, Fractional:
		return nil
	case TimeSlicing, MPS:
		return validateReplicas(m, s)
	case MIG:
		return validateMIG(m, s)
	}
	return fmt.Errorf("sharing.mode: unknown mode %q: want exclusive, mig, time-slicing, mps or fractional", s.Mode)
}

func validateReplicas(m Model, s Sharing) error {
	if s.Replicas < 1 {
		return fmt.Errorf("sharing.replicas: %s needs at least 1 replica per GPU, got %d", s.EffectiveMode(), s.Replicas)
	}
	if s.MPSMemoryLimit < 0 {
		return fmt.Errorf("sharing.mpsMemoryLimit: %d MiB is negative", s.MPSMemoryLimit)
	}
	if s.MPSMemoryLimit > 0 && s.EffectiveMode() != MPS {
		return fmt.Errorf("sharing.mpsMemoryLimit: only applies to mode mps, not %s", s.EffectiveMode())
	}
	if total := s.MPSMemoryLimit * resources.MiB(s.Replicas); total > m.Memory {
		return fmt.Errorf("sharing.mpsMemoryLimit: %d replicas x %d MiB exceeds the %d MiB of one %s", s.Replicas, s.MPSMemoryLimit, m.Memory, m.ID)
	}
	return nil
}

func validateMIG(m Model, s Sharing) error {
	if m.MIG == nil {
		return fmt.Errorf("sharing.mode: GPU model %s does not support MIG", m.ID)
	}
	strategy := s.EffectiveMIGStrategy()
	if strategy != MIGSingle && strategy != MIGMixed {
		return fmt.Errorf("sharing.migStrategy: unknown strategy %q: want single or mixed", s.MIGStrategy)
	}
	gpus := len(s.CustomProfiles)
	if gpus == 0 {
		gpus = 1
	}
	layouts, err := m.ResolveLayout(s, gpus)
	if err != nil {
		return fmt.Errorf("sharing.layout: %w", err)
	}
	if strategy == MIGSingle {
		if p, q, ok := twoProfiles(layouts); ok {
			return fmt.Errorf("sharing.migStrategy: single needs one profile on every GPU, layout %q has %s and %s (use mixed)", s.Layout, p, q)
		}
	}
	return nil
}

// twoProfiles finds two different profiles in the layouts, if there are.
func twoProfiles(layouts [][]Instance) (string, string, bool) {
	first := ""
	for _, l := range layouts {
		for _, in := range l {
			if first == "" {
				first = in.Profile
			} else if in.Profile != first {
				return first, in.Profile, true
			}
		}
	}
	return "", "", false
}
