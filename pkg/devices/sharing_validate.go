package devices

import (
	"fmt"
	"strings"

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
	if len(s.Resources) > 0 {
		return validateResources(m, s)
	}
	if s.Replicas < 1 {
		return fmt.Errorf("sharing.replicas: %s needs at least 1 replica per GPU, got %d", s.EffectiveMode(), s.Replicas)
	}
	return validateMPSLimit(m, s, s.Replicas)
}

func validateMPSLimit(m Model, s Sharing, replicas int) error {
	if s.MPSMemoryLimit < 0 {
		return fmt.Errorf("sharing.mpsMemoryLimit: %d MiB is negative", s.MPSMemoryLimit)
	}
	if s.MPSMemoryLimit > 0 && s.EffectiveMode() != MPS {
		return fmt.Errorf("sharing.mpsMemoryLimit: only applies to mode mps, not %s", s.EffectiveMode())
	}
	if total := s.MPSMemoryLimit * resources.MiB(replicas); total > m.Memory {
		return fmt.Errorf("sharing.mpsMemoryLimit: %d replicas x %d MiB exceeds the %d MiB of one %s", replicas, s.MPSMemoryLimit, m.Memory, m.ID)
	}
	return nil
}

// validateResources checks NVIDIA's per-resource list: with it the node-wide Replicas
// and the per-entry counts would disagree, so Replicas must be unset; each entry names
// nvidia.com/gpu or a MIG profile of the model, at least one replica, a rename the device
// model can serve and a device selection NVIDIA's syntax allows. MPS replicates whole
// GPUs only: its limits are per GPU.
func validateResources(m Model, s Sharing) error {
	if s.Replicas != 0 {
		return fmt.Errorf("sharing.replicas: %d set together with sharing.resources: give the replicas per resource", s.Replicas)
	}
	if err := listedOnce(s.Resources); err != nil {
		return err
	}
	for i, r := range s.Resources {
		field := fmt.Sprintf("sharing.resources[%d]", i)
		if err := validateResource(m, s, r); err != nil {
			return fmt.Errorf("%s.%w", field, err)
		}
		if err := validateMPSLimit(m, s, r.Replicas); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	return nil
}

func validateResource(m Model, s Sharing, r ReplicatedResource) error {
	profile, isMIG := r.Name.MIGProfile()
	switch {
	case r.Name != resources.NvidiaGPU && !isMIG:
		return fmt.Errorf("name: %q is not replicable: want nvidia.com/gpu or nvidia.com/mig-<profile>", r.Name)
	case isMIG && s.EffectiveMode() == MPS:
		return fmt.Errorf("name: %s: MPS replicates whole GPUs only, not MIG devices", r.Name)
	case isMIG && !hasProfile(m, profile):
		return fmt.Errorf("name: %s: %s has no MIG profile %q", r.Name, m.ID, profile)
	case r.Replicas < 1:
		return fmt.Errorf("replicas: %s needs at least 1 replica, got %d", r.Name, r.Replicas)
	case r.Rename != "" && r.Rename != r.Name && r.Rename != r.Name+SharedSuffix:
		return fmt.Errorf("rename: %q: the device model serves %s or %s%s only", r.Rename, r.Name, r.Name, SharedSuffix)
	case r.DeviceCount < 0:
		return fmt.Errorf("devices: count %d is negative", r.DeviceCount)
	case r.DeviceCount > 0 && len(r.Devices) > 0:
		return fmt.Errorf("devices: a count and a list are exclusive")
	}
	for _, d := range r.Devices {
		if !validDeviceRef(d) {
			return fmt.Errorf("devices: %q: want all, a GPU index, <gpu>:<mig> or a GPU-/MIG- UUID", d)
		}
	}
	return nil
}

// hasProfile accepts the catalog's spelling and NVIDIA's resource spelling ("+me" as ".me").
func hasProfile(m Model, profile string) bool {
	if _, ok := m.Profile(profile); ok {
		return true
	}
	_, ok := m.Profile(strings.Replace(profile, ".me", "+me", 1))
	return ok
}

// validDeviceRef is NVIDIA's device list syntax.
func validDeviceRef(d string) bool {
	if d == "all" || strings.HasPrefix(d, "GPU-") || strings.HasPrefix(d, "MIG-") {
		return len(d) > 4 || d == "all"
	}
	gpu, mig, isMIG := strings.Cut(d, ":")
	if _, ok := parseIndex(gpu); !ok {
		return false
	}
	if !isMIG {
		return true
	}
	_, ok := parseIndex(mig)
	return ok
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
	if s.DynamicMIG() && len(s.Resources) > 0 {
		return fmt.Errorf("sharing.resources: time-sliced MIG devices need a fixed layout, not %s", LayoutDynamic)
	}
	if err := validateMIGResources(m, s); err != nil {
		return err
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

// validateMIGResources checks the time-sliced MIG devices of a MIG sharing: each entry a
// MIG resource of the model (or nvidia.com/gpu, the MIG devices of the single
// strategy), with the checks of any replicated resource. Whole GPUs beside MIG are not
// replicated in mode mig, so nvidia.com/gpu under mixed is refused, not ignored.
func validateMIGResources(m Model, s Sharing) error {
	if len(s.Resources) == 0 {
		return nil
	}
	if s.Replicas != 0 {
		return fmt.Errorf("sharing.replicas: %d set in mode mig: give the replicas per MIG resource in sharing.resources", s.Replicas)
	}
	if s.MPSMemoryLimit != 0 {
		return fmt.Errorf("sharing.mpsMemoryLimit: only applies to mode mps, not mig")
	}
	ts := s
	ts.Mode = TimeSlicing // MIG devices are time-sliced, never MPS clients
	if err := listedOnce(s.Resources); err != nil {
		return err
	}
	for i, r := range s.Resources {
		field := fmt.Sprintf("sharing.resources[%d]", i)
		if r.Name == resources.NvidiaGPU && s.EffectiveMIGStrategy() != MIGSingle {
			return fmt.Errorf("%s.name: nvidia.com/gpu in mode mig with strategy %s: only MIG resources are time-sliced (nvidia.com/gpu names MIG devices under single only)", field, s.EffectiveMIGStrategy())
		}
		if _, isMIG := r.Name.MIGProfile(); isMIG && s.EffectiveMIGStrategy() == MIGSingle {
			return fmt.Errorf("%s.name: %s under strategy single: MIG devices are advertised as nvidia.com/gpu", field, r.Name)
		}
		if err := validateResource(m, ts, r); err != nil {
			return fmt.Errorf("%s.%w", field, err)
		}
	}
	return nil
}

// listedOnce refuses a resource listed twice in sharing.resources.
func listedOnce(rs []ReplicatedResource) error {
	seen := map[resources.Name]bool{}
	for i, r := range rs {
		if seen[r.Name] {
			return fmt.Errorf("sharing.resources[%d].name: %s is listed twice", i, r.Name)
		}
		seen[r.Name] = true
	}
	return nil
}
