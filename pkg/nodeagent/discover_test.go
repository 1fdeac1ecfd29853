package nodeagent_test

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml/mock"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestDiscoverDGXA100(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	if d.Model.ID != "A100-SXM4-40GB" || d.Product != "NVIDIA-A100-SXM4-40GB" {
		t.Fatalf("model %s product %s, want A100-SXM4-40GB / NVIDIA-A100-SXM4-40GB", d.Model.ID, d.Product)
	}
	if d.DriverVersion != mock.DGXA100Driver || d.CUDAMajor != 12 || d.CUDAMinor != 2 || !d.MIGCapable {
		t.Fatalf("driver %s CUDA %d.%d MIG %t, want %s 12.2 true", d.DriverVersion, d.CUDAMajor, d.CUDAMinor, d.MIGCapable, mock.DGXA100Driver)
	}
	if len(d.GPUs) != 8 {
		t.Fatalf("%d GPUs, want 8", len(d.GPUs))
	}
	wantBus := []string{"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0", "0000:87:00.0", "0000:90:00.0", "0000:b7:00.0", "0000:bd:00.0"}
	uuids := map[string]bool{}
	for i, g := range d.GPUs {
		if g.Index != i || g.BusID != wantBus[i] || g.Memory != mock.A100MemoryMiB || !g.Healthy || g.MIGEnabled {
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
	if l[nodeagent.LabelNVLinkDomains] != "2" {
		t.Errorf("%s=%q, want 2", nodeagent.LabelNVLinkDomains, l[nodeagent.LabelNVLinkDomains])
	}
	if v, ok := l[nodeagent.LabelGPUsPerNVLinkDomain]; ok {
		t.Errorf("%s=%q written for unequal domains (7+1)", nodeagent.LabelGPUsPerNVLinkDomain, v)
	}
}

func TestLabels(t *testing.T) {
	common := map[string]string{
		"nvidia.com/cuda.driver.major": "535", "nvidia.com/cuda.driver.minor": "129", "nvidia.com/cuda.driver.rev": "03",
		"nvidia.com/cuda.runtime.major": "12", "nvidia.com/cuda.runtime.minor": "2",
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

func TestProfileNames(t *testing.T) {
	srv := mock.NewDGXA100()
	srv.Init()
	h, _ := srv.DeviceGetHandleByIndex(0)
	mem, _ := h.GetMemoryInfo()
	want := map[int]string{
		nvml.GPU_INSTANCE_PROFILE_1_SLICE: "1g.5gb", nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1: "1g.5gb+me",
		nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2: "1g.10gb", nvml.GPU_INSTANCE_PROFILE_2_SLICE: "2g.10gb",
		nvml.GPU_INSTANCE_PROFILE_3_SLICE: "3g.20gb", nvml.GPU_INSTANCE_PROFILE_4_SLICE: "4g.20gb",
		nvml.GPU_INSTANCE_PROFILE_7_SLICE: "7g.40gb",
	}
	model, _ := devices.LookupModel("A100-SXM4-40GB")
	for id, name := range want {
		info, r := h.GetGpuInstanceProfileInfo(id)
		if r != nvml.SUCCESS {
			t.Fatalf("profile %d: %v", id, r)
		}
		if got := nodeagent.ProfileName(info, mem.Total); got != name {
			t.Errorf("profile %d: name %q, want %q", id, got, name)
		}
		if _, ok := model.Profile(name); !ok {
			t.Errorf("profile %s is not in pkg/devices' A100-SXM4-40GB catalog", name)
		}
	}
	if n := len(model.ProfileNames()); n != len(want) {
		t.Errorf("pkg/devices has %d A100-40GB profiles, the mock %d", n, len(want))
	}
}

func TestDiscoverErrorsNameTheGPU(t *testing.T) {
	tests := []struct {
		name string
		gpu  int
		as   string
		// want is a fragment of the error.
		want string
	}{
		{"unknown model", 0, "NVIDIA Quantum QPU", `GPU 0 (NVIDIA Quantum QPU): unknown GPU model`},
		{"mixed models", 5, "NVIDIA H100 80GB HBM3", "GPU 5 is a H100-SXM5-80GB but GPU 0 is a A100-SXM4-40GB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			b.Server().SetName(tc.gpu, tc.as)
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
