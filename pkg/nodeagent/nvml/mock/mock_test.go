package mock

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
)

func TestHardwareRefusals(t *testing.T) {
	s := NewDGXA100()
	if _, r := s.DeviceGetCount(); r != nvml.ERROR_UNINITIALIZED {
		t.Fatalf("DeviceGetCount before Init: %v, want ERROR_UNINITIALIZED", r)
	}
	s.Init()
	h, _ := s.DeviceGetHandleByIndex(0)
	info3g, _ := h.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	at0 := &nvml.GpuInstancePlacement{Start: 0, Size: 4}
	if _, r := h.CreateGpuInstanceWithPlacement(&info3g, at0); r != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("create with MIG off: %v, want ERROR_NOT_SUPPORTED", r)
	}
	h.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	if _, r := h.CreateGpuInstanceWithPlacement(&info3g, &nvml.GpuInstancePlacement{Start: 0, Size: 2}); r != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("3g with size 2: %v, want ERROR_INVALID_ARGUMENT", r)
	}
	gi, r := h.CreateGpuInstanceWithPlacement(&info3g, at0)
	if r != nvml.SUCCESS {
		t.Fatalf("3g@0: %v", r)
	}
	if _, r := h.CreateGpuInstanceWithPlacement(&info3g, at0); r != nvml.ERROR_INSUFFICIENT_RES {
		t.Errorf("second 3g@0: %v, want ERROR_INSUFFICIENT_RESOURCES", r)
	}
	ciInfo, r := gi.GetComputeInstanceProfileInfo(nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if r != nvml.SUCCESS {
		t.Fatalf("CI profile: %v", r)
	}
	ci, r := gi.CreateComputeInstance(&ciInfo)
	if r != nvml.SUCCESS {
		t.Fatalf("CI: %v", r)
	}
	if _, r := gi.CreateComputeInstance(&ciInfo); r != nvml.ERROR_INSUFFICIENT_RES {
		t.Errorf("second 3-slice CI in a 3g GI: %v, want ERROR_INSUFFICIENT_RESOURCES", r)
	}
	if _, r := h.SetMigMode(nvml.DEVICE_MIG_DISABLE); r != nvml.ERROR_IN_USE {
		t.Errorf("disable MIG with a GI: %v, want ERROR_IN_USE", r)
	}
	if r := gi.Destroy(); r != nvml.ERROR_IN_USE {
		t.Errorf("destroy GI with a CI: %v, want ERROR_IN_USE", r)
	}
	m, r := h.GetMigDeviceHandleByIndex(0)
	if r != nvml.SUCCESS {
		t.Fatalf("MIG device 0: %v", r)
	}
	if u, _ := m.GetUUID(); len(u) != len("MIG-")+36 {
		t.Errorf("MIG UUID %q is not MIG-<36-char uuid>", u)
	}
	if r := ci.Destroy(); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	if r := gi.Destroy(); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	if _, r := h.SetMigMode(nvml.DEVICE_MIG_DISABLE); r != nvml.SUCCESS {
		t.Errorf("disable MIG when empty: %v", r)
	}
}

func TestEventsReachOnlyRegisteredSets(t *testing.T) {
	s := NewDGXA100()
	s.Init()
	set, _ := s.EventSetCreate()
	h, _ := s.DeviceGetHandleByIndex(2)
	if r := h.RegisterEvents(nvml.EventTypeXidCriticalError, set); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	if n := s.InjectECC(2); n != 0 {
		t.Errorf("ECC reached %d sets, want 0 (only XID registered)", n)
	}
	if n := s.InjectXID(3, 79, nvml.NoInstance); n != 0 {
		t.Errorf("XID on GPU 3 reached %d sets, want 0 (only GPU 2 registered)", n)
	}
	if n := s.InjectXID(2, 79, nvml.NoInstance); n != 1 {
		t.Fatalf("XID on GPU 2 reached %d sets, want 1", n)
	}
	ev, r := set.Wait(1000)
	if r != nvml.SUCCESS || ev.EventData != 79 || ev.EventType != nvml.EventTypeXidCriticalError {
		t.Fatalf("Wait: %+v %v", ev, r)
	}
	if u, _ := ev.Device.GetUUID(); u != gpuUUID(2) {
		t.Errorf("event device %s, want GPU 2", u)
	}
}
