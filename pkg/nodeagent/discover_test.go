package nodeagent_test

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestDiscoverDGXA100(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	if d.Model.ID != "A100-SXM4-40GB" || d.Product != "NVIDIA-A100-SXM4-40GB" {
		t.Fatalf("model %s product %s, want A100-SXM4-40GB / NVIDIA-A100-SXM4-40GB", d.Model.ID, d.Product)
	}
	if d.DriverVersion != "550.54.15" || d.CUDAMajor != 12 || d.CUDAMinor != 4 || !d.MIGCapable {
		t.Fatalf("driver %s CUDA %d.%d MIG %t, want 550.54.15 12.4 true", d.DriverVersion, d.CUDAMajor, d.CUDAMinor, d.MIGCapable)
	}
	if len(d.GPUs) != 8 {
		t.Fatalf("%d GPUs, want 8", len(d.GPUs))
	}
	wantBus := []string{"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0", "0000:87:00.0", "0000:90:00.0", "0000:b7:00.0", "0000:bd:00.0"}
	uuids := map[string]bool{}
	for i, g := range d.GPUs {
		if g.Index != i || g.BusID != wantBus[i] || g.Memory != 40960 || !g.Healthy || g.MIGEnabled {
			t.Errorf("GPU %d: %+v", i, g)
		}
		// NVSwitch: one domain; two GPUs per PCIe switch.
		if g.NVLinkDomain != 0 || g.PCIeSwitch != i/2 {
			t.Errorf("GPU %d: NVLink domain %d PCIe switch %d, want 0 and %d", i, g.NVLinkDomain, g.PCIeSwitch, i/2)
		}
		if !strings.HasPrefix(g.UUID, "GPU-") || uuids[g.UUID] {
			t.Errorf("GPU %d: UUID %q missing or repeated", i, g.UUID)
		}
		uuids[g.UUID] = true
	}
	// The discovered GPUs are a valid device model.
	gpus := make([]devices.GPU, len(d.GPUs))
	for i, g := range d.GPUs {
		gpus[i] = g.GPU
	}
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatalf("NewNodeDevices: %v", err)
	}
	if got := nd.Capacity().String(); !strings.Contains(got, "nvidia.com/gpu=8") {
		t.Errorf("capacity %s, want 8 whole GPUs", got)
	}
}

// TestDiscoverEveryMachine: each of go-nvml's DGX mocks is discovered as its catalog
// model, with one NVLink domain, and lists NVML's profiles, names and memory included.
func TestDiscoverEveryMachine(t *testing.T) {
	tests := []struct {
		machine string
		model   devices.ModelID
		memory  resources.MiB
		driver  string
		// profiles are the names NVML's profiles get on GPU 0, in profile-constant
		// order; firstMemory the first one's NVML memory.
		profiles    string
		firstMemory resources.MiB
	}{
		{nvmlmock.DGXA100, "A100-SXM4-40GB", 40960, "550.54.15",
			"[1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb 1g.5gb+me 1g.10gb]", 4864},
		{nvmlmock.DGXH100, "H100-SXM5-80GB", 81920, "550.54.15",
			"[1g.10gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb 1g.10gb+me 1g.20gb]", 10240},
		// go-nvml's H200 and B200 mocks give each profile its name's GB times 1024, a
		// little over its share of the GPU (18432 of 144384 MB is more than an eighth),
		// so NVIDIA's naming rule, which rounds the share up to eighths, gives larger
		// names than a real H200 or B200 shows (1g.35gb for 1g.18gb, 3g.88gb for 3g.71gb).
		{nvmlmock.DGXH200, "H200-141GB", 144384, "550.54.15",
			"[1g.35gb 2g.35gb 3g.88gb 4g.88gb 7g.141gb 1g.35gb+me 1g.35gb]", 18432},
		{nvmlmock.DGXB200, "B200-180GB", 184320, "560.28.03",
			"[1g.45gb 2g.45gb 3g.90gb 4g.90gb 7g.180gb 1g.45gb+me 1g.45gb]", 23552},
	}
	for _, tc := range tests {
		t.Run(tc.machine, func(t *testing.T) {
			b := mocknode.MakeMachine(t, tc.machine)
			d := b.Discover()
			if d.Model.ID != tc.model || d.DriverVersion != tc.driver || len(d.GPUs) != 8 || !d.MIGCapable {
				t.Fatalf("model %s driver %s, %d GPUs, MIG capable %t; want %s %s, 8, true", d.Model.ID, d.DriverVersion, len(d.GPUs), d.MIGCapable, tc.model, tc.driver)
			}
			for _, g := range d.GPUs {
				if g.Memory != tc.memory || g.NVLinkDomain != 0 || g.MIGEnabled {
					t.Errorf("GPU %d: memory %d domain %d MIG %t, want %d, 0, off", g.Index, g.Memory, g.NVLinkDomain, g.MIGEnabled, tc.memory)
				}
			}
			// NVML lists the profiles with MIG mode off too.
			g := d.GPUs[0]
			names := make([]string, len(g.Profiles))
			for i, p := range g.Profiles {
				names[i] = p.Name
				if len(p.Placements) == 0 {
					t.Errorf("profile %s: no placements", p.Name)
				}
			}
			if got := "[" + strings.Join(names, " ") + "]"; got != tc.profiles {
				t.Errorf("profiles %s, want %s", got, tc.profiles)
			}
			if g.Profiles[0].Memory != tc.firstMemory {
				t.Errorf("%s: NVML memory %d MiB, want %d", g.Profiles[0].Name, g.Profiles[0].Memory, tc.firstMemory)
			}
		})
	}
}

func TestNVLinkDomainsAreConnectedComponents(t *testing.T) {
	d := mocknode.MakeNode(t).NVLinkDown(7).Discover()
	for i, g := range d.GPUs {
		want := 0
		if i == 7 {
			want = 1 // no active link: a domain of its own
		}
		if g.NVLinkDomain != want {
			t.Errorf("GPU %d: domain %d, want %d", i, g.NVLinkDomain, want)
		}
	}
	l := nodeagent.Labels(d, devices.Sharing{})
	if l[devices.LabelNVLinkDomains] != "2" {
		t.Errorf("%s=%q, want 2", devices.LabelNVLinkDomains, l[devices.LabelNVLinkDomains])
	}
	if v, ok := l[devices.LabelGPUsPerNVLinkDomain]; ok {
		t.Errorf("%s=%q written for unequal domains (7+1)", devices.LabelGPUsPerNVLinkDomain, v)
	}
}

func TestLabels(t *testing.T) {
	common := map[string]string{
		"nvidia.com/cuda.driver.major": "550", "nvidia.com/cuda.driver.minor": "54", "nvidia.com/cuda.driver.rev": "15",
		"nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "4",
		"nvidia.com/gpu.family": "ampere", "nvidia.com/mig.capable": "true",
		"gantry.dev/nvlink-domains": "1", "gantry.dev/gpus-per-nvlink-domain": "8",
	}
	tests := []struct {
		name string
		node func(*mocknode.NodeWrapper) *mocknode.NodeWrapper
		// want are labels that must have these values (on top of common); absent
		// lists labels that must not be written.
		want   map[string]string
		absent []string
	}{
		{
			name: "exclusive",
			node: func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b },
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8",
				"nvidia.com/gpu.memory": "40960", "nvidia.com/gpu.replicas": "1", "nvidia.com/gpu.sharing-strategy": "none"},
			absent: []string{"nvidia.com/mig.strategy"},
		},
		{
			name: "time-slicing x4 keeps nvidia.com/gpu and marks the product SHARED",
			node: func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
				return b.Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4})
			},
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-SHARED", "nvidia.com/gpu.replicas": "4",
				"nvidia.com/gpu.sharing-strategy": "time-slicing"},
		},
		{
			name: "mps renamed keeps the product",
			node: func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
				return b.Sharing(devices.Sharing{Mode: devices.MPS, Replicas: 2, RenameByDefault: true})
			},
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.replicas": "2",
				"nvidia.com/gpu.sharing-strategy": "mps"},
		},
		{
			name: "MIG single all-1g.5gb counts MIG devices like GFD",
			node: func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b.Layout("all-1g.5gb") },
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/gpu.count": "56",
				"nvidia.com/gpu.memory": "4864", "nvidia.com/mig.strategy": "single"},
			absent: []string{"nvidia.com/mig-1g.5gb.count"},
		},
		{
			name: "MIG mixed all-balanced adds per-profile labels",
			node: func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
				return b.Strategy(devices.MIGMixed).Layout("all-balanced")
			},
			want: map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8",
				"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-1g.5gb.count": "16", "nvidia.com/mig-2g.10gb.count": "8",
				"nvidia.com/mig-3g.20gb.count": "8", "nvidia.com/mig-3g.20gb.memory": "19968", "nvidia.com/mig-3g.20gb.slices.gi": "3"},
		},
		{
			name: "fractional is Gantry's own label",
			node: func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
				return b.Sharing(devices.Sharing{Mode: devices.Fractional})
			},
			want:   map[string]string{"gantry.dev/gpu-sharing": "fractional", "nvidia.com/gpu.count": "8"},
			absent: []string{"nvidia.com/mig.strategy"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.node(mocknode.MakeNode(t))
			got := nodeagent.Labels(b.Discover(), b.Configured())
			for _, want := range []map[string]string{common, tc.want} {
				for k, v := range want {
					if got[k] != v {
						t.Errorf("label %s=%q, want %q", k, got[k], v)
					}
				}
			}
			for _, k := range tc.absent {
				if v, ok := got[k]; ok {
					t.Errorf("label %s=%q should not be written", k, v)
				}
			}
		})
	}
}

// TestMIGDevicesCarryNVMLMemory: discovered MIG devices have NVML's memory for their
// profile (4864 MiB for 1g.5gb on an A100-40GB), not the 5 GiB of the name, and the
// catalog's profile at the same slot.
func TestMIGDevicesCarryNVMLMemory(t *testing.T) {
	d := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Discover()
	want := map[string]resources.MiB{"1g.5gb": 4864, "2g.10gb": 9856, "3g.20gb": 19968}
	for _, g := range d.GPUs {
		if len(g.MIG) != 4 {
			t.Fatalf("GPU %d: %d MIG devices, want 4", g.Index, len(g.MIG))
		}
		for _, m := range g.MIG {
			if m.Memory != want[m.Instance.Profile] || !strings.HasPrefix(m.UUID, "MIG-") {
				t.Errorf("GPU %d %s: memory %d UUID %q, want %d and a MIG UUID", g.Index, m.Instance, m.Memory, m.UUID, want[m.Instance.Profile])
			}
		}
	}
}

func TestProfileNamesOfEveryNVMLProfile(t *testing.T) {
	const a100 = 40960 << 20 // bytes
	tests := []struct {
		id     int
		slices uint32
		mb     uint64
		want   string
	}{
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 1, 4864, "1g.5gb"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE, 2, 9856, "2g.10gb"},
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 3, 19968, "3g.20gb"},
		{nvml.GPU_INSTANCE_PROFILE_4_SLICE, 4, 19968, "4g.20gb"},
		{nvml.GPU_INSTANCE_PROFILE_7_SLICE, 7, 40192, "7g.40gb"},
		{nvml.GPU_INSTANCE_PROFILE_8_SLICE, 8, 40192, "8g.40gb"},
		{nvml.GPU_INSTANCE_PROFILE_6_SLICE, 6, 30000, "6g.30gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, 1, 4864, "1g.5gb+me"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1, 2, 9856, "2g.10gb+me"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2, 1, 9856, "1g.10gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, 1, 4864, "1g.5gb+gfx"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX, 2, 9856, "2g.10gb+gfx"},
		{nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX, 4, 19968, "4g.20gb+gfx"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, 1, 4864, "1g.5gb-me"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME, 2, 9856, "2g.10gb-me"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, 1, 4864, "1g.5gb+me.all"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME, 2, 9856, "2g.10gb+me.all"},
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE_GFX, 3, 19968, "3g.20gb+gfx"},
	}
	if len(tests) != nvml.GPU_INSTANCE_PROFILE_COUNT {
		t.Fatalf("%d cases for NVML's %d profiles", len(tests), nvml.GPU_INSTANCE_PROFILE_COUNT)
	}
	for _, tc := range tests {
		// Real drivers put their own numbering in Id (nvidia-smi's profile IDs); the
		// name comes from the constant asked for.
		info := nvml.GpuInstanceProfileInfo{Id: uint32(19 + tc.id), SliceCount: tc.slices, MemorySizeMB: tc.mb}
		if got := nodeagent.ProfileName(tc.id, info, a100); got != tc.want {
			t.Errorf("profile %d: %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestDiscoverErrorsNameTheGPU(t *testing.T) {
	tests := []struct {
		name  string
		setup func(*testing.T, *nvmlmock.Server)
		// want is a fragment of the error.
		want string
	}{
		{"unknown model", func(t *testing.T, s *nvmlmock.Server) { s.SetName(0, "NVIDIA Quantum QPU") },
			`GPU 0 (NVIDIA Quantum QPU): unknown GPU model`},
		{"mixed models", func(t *testing.T, s *nvmlmock.Server) { s.SetName(5, "NVIDIA H100 80GB HBM3") },
			"GPU 5 is a H100-SXM5-80GB but GPU 0 is a A100-SXM4-40GB"},
		{"live instance of a profile the catalog lacks", func(t *testing.T, s *nvmlmock.Server) {
			// An A100-40GB's 1g.5gb is not an A100-80GB profile.
			for i := 0; i < s.GPUCount(); i++ {
				s.SetName(i, "NVIDIA A100-SXM4-80GB")
			}
			h, _ := s.DeviceGetHandleByIndex(3)
			h.SetMigMode(nvml.DEVICE_MIG_ENABLE)
			info, _ := h.GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
			if _, r := h.CreateGpuInstanceWithPlacement(&info, &nvml.GpuInstancePlacement{Start: 2, Size: 1}); r != nvml.SUCCESS {
				t.Fatalf("creating 1g.5gb: %v", r)
			}
		}, "GPU 3 (GPU-0000a100-0003-4000-8000-000000000003): MIG profile 1g.5gb (instance at slot 2, GPU instance 0) is not in Gantry's A100-SXM4-80GB catalog"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			tc.setup(t, b.Server())
			_, err := nodeagent.Discover(b.Server(), devices.Sharing{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestMIGOnWithoutInstancesAdvertisesNothing(t *testing.T) {
	b := mocknode.MakeNode(t)
	h, _ := b.Server().DeviceGetHandleByIndex(2)
	h.SetMigMode(nvml.DEVICE_MIG_ENABLE)
	_, inv := b.Inventory()
	if _, ok := inv.Lookup("GPU-2"); ok || len(inv.Devices(resources.NvidiaGPU)) != 7 {
		t.Errorf("GPU-2 with MIG on and no instances is advertised: %d devices", len(inv.Devices(resources.NvidiaGPU)))
	}
}

// Discovery reads what GFD labels from NVML (compute capability, each MIG profile's
// multiprocessors and engines), and the labels carry it.
func TestDiscoverFactsReachTheLabels(t *testing.T) {
	node := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-1g.5gb")
	d := node.Discover()
	if d.Facts.ComputeMajor != 8 || d.Facts.ComputeMinor != 0 {
		t.Fatalf("compute capability %d.%d, want 8.0", d.Facts.ComputeMajor, d.Facts.ComputeMinor)
	}
	a, ok := d.Facts.MIG["1g.5gb"]
	if !ok || a.Multiprocessors != 14 || a.CopyEngines != 1 || a.ComputeInstanceSlices != 1 {
		t.Fatalf("1g.5gb attributes %+v (found %t), want 14 multiprocessors, 1 copy engine, 1 slice", a, ok)
	}
	l := nodeagent.Labels(d, node.Configured())
	for k, v := range map[string]string{
		"nvidia.com/gpu.compute.major":           "8",
		"nvidia.com/mig-1g.5gb.count":            "56",
		"nvidia.com/mig-1g.5gb.multiprocessors":  "14",
		"nvidia.com/mig-1g.5gb.engines.copy":     "1",
		"nvidia.com/mig-1g.5gb.memory":           "4864",
		"nvidia.com/mig-1g.5gb.slices.ci":        "1",
		"nvidia.com/mig-1g.5gb.sharing-strategy": "none",
	} {
		if l[k] != v {
			t.Errorf("label %s = %q, want %q", k, l[k], v)
		}
	}
}
