package nodeagent_test

import (
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"pgregory.net/rapid"

	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// migGPU is GPU 0 of a fresh go-nvml DGX A100 mock (extended with NVML's placement
// rules by nvmlmock) with MIG on, and the mock's profiles by name.
type migGPU struct {
	dev      nvml.Device
	profiles map[string]nvml.GpuInstanceProfileInfo
	model    devices.Model
}

// fatalf is what both *testing.T and *rapid.T offer.
type fatalf interface {
	Helper()
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

func newMIGGPU(t fatalf) migGPU {
	t.Helper()
	srv, err := nvmlmock.New(nvmlmock.DGXA100)
	if err != nil {
		t.Fatal(err)
	}
	srv.Init()
	h, _ := srv.DeviceGetHandleByIndex(0)
	if act, r := h.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS || act != nvml.SUCCESS {
		t.Fatalf("enabling MIG: %v %v", act, r)
	}
	mem, _ := h.GetMemoryInfo()
	g := migGPU{dev: h, profiles: map[string]nvml.GpuInstanceProfileInfo{}}
	for id := 0; id < nvml.GPU_INSTANCE_PROFILE_COUNT; id++ {
		if info, r := h.GetGpuInstanceProfileInfo(id); r == nvml.SUCCESS {
			g.profiles[nodeagent.ProfileName(id, info, mem.Total)] = info
		}
	}
	if g.model, err = devices.LookupModel("A100-SXM4-40GB"); err != nil {
		t.Fatal(err)
	}
	return g
}

// create asks the mock for an instance of profile at start, with the placement size
// pkg/devices gives the profile; it returns the instance or nil.
func (g migGPU) create(t fatalf, in devices.Instance) nvml.GpuInstance {
	info, ok := g.profiles[in.Profile]
	if !ok {
		t.Fatalf("the mock has no profile %s", in.Profile)
	}
	p, _ := g.model.Profile(in.Profile)
	gi, r := g.dev.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: uint32(in.Start), Size: uint32(p.MemorySlices)})
	if r != nvml.SUCCESS {
		return nil
	}
	return gi
}

// allPlacements is every profile of pkg/devices' A100-40GB at every slot 0..7.
func allPlacements(m devices.Model) []devices.Instance {
	var out []devices.Instance
	for _, name := range m.ProfileNames() {
		for s := 0; s < m.MIG.MemorySlices; s++ {
			out = append(out, devices.Instance{Profile: name, Start: s})
		}
	}
	return out
}

// TestMockAgreesWithDevicesOnSinglePlacements: on an empty GPU the mock creates an
// instance exactly when pkg/devices' ValidateLayout accepts it, for every profile and
// start slot.
func TestMockAgreesWithDevicesOnSinglePlacements(t *testing.T) {
	g := newMIGGPU(t)
	accepted := 0
	for _, in := range allPlacements(g.model) {
		want := g.model.ValidateLayout([]devices.Instance{in}) == nil
		gi := g.create(t, in)
		if (gi != nil) != want {
			t.Errorf("%s: mock created=%t, pkg/devices valid=%t", in, gi != nil, want)
		}
		if gi != nil {
			accepted++
			if r := gi.Destroy(); r != nvml.SUCCESS {
				t.Fatalf("%s: destroy: %v", in, r)
			}
		}
	}
	// 7+7+4+3+2+1+1 start slots over the seven profiles.
	if accepted != 25 {
		t.Errorf("%d placements accepted, want 25", accepted)
	}
}

// TestMockAgreesWithDevicesOnPairs: every ordered pair of placements; the second one is
// accepted by the mock exactly when pkg/devices accepts the two together.
func TestMockAgreesWithDevicesOnPairs(t *testing.T) {
	g := newMIGGPU(t)
	var valid []devices.Instance
	for _, in := range allPlacements(g.model) {
		if g.model.ValidateLayout([]devices.Instance{in}) == nil {
			valid = append(valid, in)
		}
	}
	for _, a := range valid {
		first := g.create(t, a)
		if first == nil {
			t.Fatalf("%s alone was refused", a)
		}
		for _, b := range valid {
			want := g.model.ValidateLayout([]devices.Instance{a, b}) == nil
			second := g.create(t, b)
			if (second != nil) != want {
				t.Errorf("%s then %s: mock created=%t, pkg/devices valid=%t", a, b, second != nil, want)
			}
			if second != nil {
				second.Destroy()
			}
		}
		first.Destroy()
	}
}

// TestMockAgreesWithDevicesOnSequences is the property: for any sequence of placement
// attempts, the mock accepts an attempt exactly when pkg/devices accepts the layout
// built so far plus it.
func TestMockAgreesWithDevicesOnSequences(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := newMIGGPU(rt)
		all := allPlacements(g.model)
		var layout []devices.Instance
		steps := rapid.IntRange(1, 12).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			in := rapid.SampledFrom(all).Draw(rt, fmt.Sprintf("attempt%d", i))
			next := append(append([]devices.Instance(nil), layout...), in)
			want := g.model.ValidateLayout(next) == nil
			if got := g.create(rt, in) != nil; got != want {
				rt.Fatalf("layout %v + %s: mock created=%t, pkg/devices valid=%t", layout, in, got, want)
			}
			if want {
				layout = next
			}
		}
	})
}
