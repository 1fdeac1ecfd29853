package nodeagent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
)

func newMachine(t *testing.T, machine string) *nvmlmock.Server {
	t.Helper()
	s, err := nvmlmock.New(machine)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Init(); r != nvml.SUCCESS {
		t.Fatalf("Init: %v", r)
	}
	return s
}

// TestApplyGPUOnEveryMachine: on each DGX mock, applyGPU creates a layout of the
// catalog's profiles at their slots, discovery reads it back with NVML's memory, and
// applying nil turns MIG off with nothing left.
func TestApplyGPUOnEveryMachine(t *testing.T) {
	tests := []struct {
		machine string
		want    []devices.Instance
	}{
		{nvmlmock.DGXA100, []devices.Instance{{Profile: "1g.5gb+me", Start: 0}, {Profile: "1g.5gb", Start: 1}, {Profile: "2g.10gb", Start: 2}, {Profile: "3g.20gb", Start: 4}}},
		{nvmlmock.DGXH100, []devices.Instance{{Profile: "1g.20gb", Start: 0}, {Profile: "2g.20gb", Start: 2}, {Profile: "3g.40gb", Start: 4}}},
		// The H200 and B200 mocks' profile memory names most of their profiles apart
		// from the catalog (see TestDiscoverEveryMachine); these are the ones that agree.
		{nvmlmock.DGXH200, []devices.Instance{{Profile: "2g.35gb", Start: 0}, {Profile: "2g.35gb", Start: 2}}},
		{nvmlmock.DGXB200, []devices.Instance{{Profile: "2g.45gb", Start: 0}, {Profile: "3g.90gb", Start: 4}}},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			s := newMachine(t, tc.machine)
			d, err := Discover(s, devices.Sharing{})
			if err != nil {
				t.Fatal(err)
			}
			if err := applyGPU(s, d.Model, 1, tc.want); err != nil {
				t.Fatalf("applyGPU: %v", err)
			}
			d, err = Discover(s, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed})
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			g := d.GPUs[1]
			if fmt.Sprint(g.Instances) != fmt.Sprint(tc.want) {
				t.Errorf("reads back %v, want %v", g.Instances, tc.want)
			}
			for _, m := range g.MIG {
				p, _ := findProfile(g.Profiles, m.Instance.Profile)
				if m.Memory != p.Memory || m.Memory == 0 {
					t.Errorf("%s: memory %d, want NVML's %d", m.Instance, m.Memory, p.Memory)
				}
			}
			if err := applyGPU(s, d.Model, 1, nil); err != nil {
				t.Fatalf("applyGPU(nil): %v", err)
			}
			d, err = Discover(s, devices.Sharing{})
			if err != nil || d.GPUs[1].MIGEnabled || len(d.GPUs[1].MIG) != 0 {
				t.Errorf("after MIG off: enabled %t, %v (%v)", d.GPUs[1].MIGEnabled, d.GPUs[1].MIG, err)
			}
		})
	}
}

func TestApplyGPUErrors(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*nvmlmock.Server)
		want  []devices.Instance
		// is is the error wanted by errors.Is (nil: any); text a fragment of it.
		is   error
		text string
	}{
		{"MIG on needs a reset", func(s *nvmlmock.Server) { s.RequireReset(2) },
			[]devices.Instance{{Profile: "7g.40gb", Start: 0}}, ErrResetRequired, "GPU 2: MIG mode on is pending"},
		{"MIG off needs a reset", func(s *nvmlmock.Server) {
			h, _ := s.DeviceGetHandleByIndex(2)
			h.SetMigMode(nvml.DEVICE_MIG_ENABLE)
			s.RequireReset(2)
		}, nil, ErrResetRequired, "GPU 2: MIG mode off is pending"},
		{"a profile the catalog lacks", func(*nvmlmock.Server) {},
			[]devices.Instance{{Profile: "1g.7gb", Start: 0}}, nil, "GPU 2: A100-SXM4-40GB has no MIG profile 1g.7gb"},
		{"a slot NVML has no placement at", func(*nvmlmock.Server) {},
			[]devices.Instance{{Profile: "3g.20gb", Start: 2}}, nil, "GPU 2: NVML has no placement of 3g.20gb starting at slot 2"},
		{"overlapping instances", func(*nvmlmock.Server) {},
			[]devices.Instance{{Profile: "4g.20gb", Start: 0}, {Profile: "3g.20gb", Start: 0}}, nvml.ERROR_INSUFFICIENT_RESOURCES, "GPU 2: creating GPU instance 3g.20gb@0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newMachine(t, nvmlmock.DGXA100)
			tc.setup(s)
			model, _ := devices.LookupModel("A100-SXM4-40GB")
			err := applyGPU(s, model, 2, tc.want)
			if err == nil || !strings.Contains(err.Error(), tc.text) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("err %v, want %q (is %v)", err, tc.text, tc.is)
			}
		})
	}
}

// TestResetAppliesPendingMode: after a reset the pending mode is in effect and applyGPU
// goes through.
func TestResetAppliesPendingMode(t *testing.T) {
	s := newMachine(t, nvmlmock.DGXA100)
	model, _ := devices.LookupModel("A100-SXM4-40GB")
	s.RequireReset(0)
	want := []devices.Instance{{Profile: "7g.40gb", Start: 0}}
	if err := applyGPU(s, model, 0, want); !errors.Is(err, ErrResetRequired) {
		t.Fatalf("err %v, want ErrResetRequired", err)
	}
	s.ResetGPU(0)
	if err := applyGPU(s, model, 0, want); err != nil {
		t.Fatalf("after the reset: %v", err)
	}
}

// extraProfiles are NVML profiles go-nvml's A100 mock lacks, offered on a GPU so every
// profile ID NVML defines is listed, created and destroyed (infos shaped like the
// A100-40GB's: memory per slice 4864 MB).
func extraProfiles() map[int]nvml.GpuInstanceProfileInfo {
	one := nvml.GpuInstanceProfileInfo{SliceCount: 1, InstanceCount: 7, MemorySizeMB: 4864}
	two := nvml.GpuInstanceProfileInfo{SliceCount: 2, InstanceCount: 3, MemorySizeMB: 9856}
	three := nvml.GpuInstanceProfileInfo{SliceCount: 3, InstanceCount: 2, MemorySizeMB: 19968}
	four := nvml.GpuInstanceProfileInfo{SliceCount: 4, InstanceCount: 1, MemorySizeMB: 19968}
	return map[int]nvml.GpuInstanceProfileInfo{
		nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:   two,
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX:    one,
		nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX:    two,
		nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:    four,
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME:  one,
		nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:  two,
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME: one,
		nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME: two,
		nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX:    three,
	}
}

// TestEveryNVMLProfileListedCreatedDestroyed: with the profiles the A100 mock lacks
// offered as well, readProfiles names every one as NVIDIA's tools do, and destroyAll
// removes an instance of each (with its compute instance), leaving the GPU empty.
func TestEveryNVMLProfileListedCreatedDestroyed(t *testing.T) {
	s := newMachine(t, nvmlmock.DGXA100)
	sizes := map[uint32]uint32{1: 1, 2: 2, 3: 4, 4: 4}
	for id, info := range extraProfiles() {
		s.OfferProfile(0, id, info, []nvml.GpuInstancePlacement{{Start: 0, Size: sizes[info.SliceCount]}})
	}
	h, _ := s.DeviceGetHandleByIndex(0)
	h.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	mem, _ := h.GetMemoryInfo()
	profiles, err := readProfiles(0, h, mem.Total)
	if err != nil {
		t.Fatal(err)
	}
	want := "[1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb 1g.5gb+me 2g.10gb+me 1g.10gb 1g.5gb+gfx 2g.10gb+gfx 4g.20gb+gfx " +
		"1g.5gb-me 2g.10gb-me 1g.5gb+me.all 2g.10gb+me.all 3g.20gb+gfx]"
	if got := fmt.Sprint(profileNames(profiles)); got != want {
		t.Fatalf("profiles %s, want %s (NVML defines %d, the A100 has no 6g or 8g)", got, want, nvml.GPU_INSTANCE_PROFILE_COUNT)
	}
	for _, p := range profiles {
		info := p.raw
		place := p.Placements[0]
		gi, r := h.CreateGpuInstanceWithPlacement(&info, &place)
		if r != nvml.SUCCESS {
			t.Fatalf("%s: create: %v", p.Name, r)
		}
		ci, r := gi.GetComputeInstanceProfileInfo(computeProfile(info.SliceCount), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if r != nvml.SUCCESS {
			t.Fatalf("%s: compute profile: %v", p.Name, r)
		}
		if _, r := gi.CreateComputeInstance(&ci); r != nvml.SUCCESS {
			t.Fatalf("%s: compute instance: %v", p.Name, r)
		}
		if err := destroyAll(h); err != nil {
			t.Fatalf("%s: destroyAll: %v", p.Name, err)
		}
		for _, q := range profiles {
			qi := q.raw
			if gis, _ := h.GetGpuInstances(&qi); len(gis) != 0 {
				t.Fatalf("after destroying %s: %d instances of %s left", p.Name, len(gis), q.Name)
			}
		}
	}
}
