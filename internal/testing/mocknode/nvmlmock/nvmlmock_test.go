package nvmlmock

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func gpu0(t *testing.T, machine string) (*Server, nvml.Device) {
	t.Helper()
	s, err := New(machine)
	if err != nil {
		t.Fatal(err)
	}
	h, r := s.DeviceGetHandleByIndex(0)
	if r != nvml.SUCCESS {
		t.Fatal(r)
	}
	return s, h
}

// TestPlacementRules: GPU instances only at NVML's placements, on free slices, within
// the profile's count, and only with MIG on.
func TestPlacementRules(t *testing.T) {
	for _, m := range Machines() {
		t.Run(m, func(t *testing.T) {
			_, h := gpu0(t, m)
			seven, _ := h.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_7_SLICE)
			if _, r := h.GetGpuInstances(&seven); r != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("instances with MIG off: %v, want ERROR_NOT_SUPPORTED", r)
			}
			if _, r := h.CreateGpuInstance(&seven); r != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("an instance with MIG off: %v, want ERROR_NOT_SUPPORTED", r)
			}
			h.SetMigMode(nvml.DEVICE_MIG_ENABLE)
			whole, _ := h.GetGpuInstancePossiblePlacements(&seven)
			if _, r := h.CreateGpuInstanceWithPlacement(&seven, &nvml.GpuInstancePlacement{Start: 1, Size: whole[0].Size}); r != nvml.ERROR_INVALID_ARGUMENT {
				t.Errorf("7g at slot 1: %v, want ERROR_INVALID_ARGUMENT", r)
			}
			gi, r := h.CreateGpuInstanceWithPlacement(&seven, &whole[0])
			if r != nvml.SUCCESS {
				t.Fatalf("7g at its placement: %v", r)
			}
			one, _ := h.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
			if _, r := h.CreateGpuInstanceWithPlacement(&one, &nvml.GpuInstancePlacement{Start: 3, Size: 1}); r != nvml.ERROR_INSUFFICIENT_RESOURCES {
				t.Errorf("1g inside a 7g: %v, want ERROR_INSUFFICIENT_RESOURCES", r)
			}
			if _, r := h.CreateGpuInstance(&seven); r != nvml.ERROR_INSUFFICIENT_RESOURCES {
				t.Errorf("a second 7g: %v, want ERROR_INSUFFICIENT_RESOURCES", r)
			}
			if act, r := h.SetMigMode(nvml.DEVICE_MIG_DISABLE); r != nvml.ERROR_IN_USE {
				t.Errorf("MIG off with an instance: %v %v, want ERROR_IN_USE", act, r)
			}
			ciInfo, _ := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
			ci, _ := gi.CreateComputeInstance(&ciInfo)
			if r := gi.Destroy(); r != nvml.ERROR_IN_USE {
				t.Errorf("destroying a GPU instance with a compute instance: %v, want ERROR_IN_USE", r)
			}
			ci.Destroy()
			if r := gi.Destroy(); r != nvml.SUCCESS {
				t.Errorf("destroy: %v", r)
			}
		})
	}
}

// TestMIGDevicesAndReset: MIG devices are enumerated per compute instance with stable
// UUIDs; a mode change waits for ResetGPU when RequireReset was called.
func TestMIGDevicesAndReset(t *testing.T) {
	s, h := gpu0(t, DGXA100)
	s.RequireReset(0)
	if act, r := h.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS || act != nvml.ERROR_RESET_REQUIRED {
		t.Fatalf("SetMigMode: %v %v, want activation ERROR_RESET_REQUIRED", act, r)
	}
	if cur, pend, _ := h.GetMigMode(); cur != nvml.DEVICE_MIG_DISABLE || pend != nvml.DEVICE_MIG_ENABLE {
		t.Fatalf("mode %d pending %d, want off with on pending", cur, pend)
	}
	s.ResetGPU(0)
	if cur, pend, _ := h.GetMigMode(); cur != nvml.DEVICE_MIG_ENABLE || pend != cur {
		t.Fatalf("after reset: mode %d pending %d, want on", cur, pend)
	}
	three, _ := h.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	for _, start := range []uint32{4, 0} {
		gi, r := h.CreateGpuInstanceWithPlacement(&three, &nvml.GpuInstancePlacement{Start: start, Size: 4})
		if r != nvml.SUCCESS {
			t.Fatalf("3g at %d: %v", start, r)
		}
		ci, _ := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		gi.CreateComputeInstance(&ci)
	}
	max, _ := h.GetMaxMigDeviceCount()
	seen := map[string]bool{}
	for i := 0; i < max; i++ {
		m, r := h.GetMigDeviceHandleByIndex(i)
		if i >= 2 {
			if r != nvml.ERROR_NOT_FOUND {
				t.Errorf("MIG device %d: %v, want ERROR_NOT_FOUND", i, r)
			}
			continue
		}
		gi, _ := m.GetGpuInstanceId()
		u, _ := m.GetUUID()
		again, _ := h.GetMigDeviceHandleByIndex(i)
		if u2, _ := again.GetUUID(); gi != i || u != u2 || seen[u] {
			t.Errorf("MIG device %d: GPU instance %d, UUID %q then %q", i, gi, u, u2)
		}
		seen[u] = true
	}
}

// TestEvents: injected events reach the sets that registered them, and a GPU can refuse.
func TestEvents(t *testing.T) {
	s, h := gpu0(t, DGXH100)
	set, _ := s.EventSetCreate()
	if r := h.RegisterEvents(nvml.EventTypeXidCriticalError, set); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	if n := s.InjectDoubleBitECC(0, NoInstance); n != 0 {
		t.Errorf("an unregistered type reached %d sets", n)
	}
	if n := s.InjectXID(0, 79, 3); n != 1 {
		t.Fatalf("XID reached %d sets, want 1", n)
	}
	ev, r := set.Wait(1000)
	if r != nvml.SUCCESS || ev.EventData != 79 || ev.GpuInstanceId != 3 || ev.ComputeInstanceId != 0 || ev.Device != h {
		t.Errorf("event %+v %v", ev, r)
	}
	if _, r := set.Wait(1); r != nvml.ERROR_TIMEOUT {
		t.Errorf("empty set: %v, want ERROR_TIMEOUT", r)
	}
	s.UnsupportedEvents(1)
	h1, _ := s.DeviceGetHandleByIndex(1)
	if _, r := h1.GetSupportedEventTypes(); r != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GPU 1 event types: %v", r)
	}
}

func TestUnknownMachine(t *testing.T) {
	if _, err := New("dgx-z9"); err == nil {
		t.Error("New accepted an unknown machine")
	}
}
