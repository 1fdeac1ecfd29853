package devices_test

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestValidateSharingResources(t *testing.T) {
	a100 := mustModel(t, "A100-SXM4-40GB")
	ts := func(rs ...devices.ReplicatedResource) devices.Sharing {
		return devices.Sharing{Mode: devices.TimeSlicing, Resources: rs}
	}
	gpu := func(replicas int) devices.ReplicatedResource {
		return devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: replicas}
	}
	tests := []struct {
		name string
		s    devices.Sharing
		// wantErr is a fragment of the error; empty means valid.
		wantErr string
	}{
		{"gpu x4", ts(gpu(4)), ""},
		{"time-sliced MIG", ts(devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb", Replicas: 2}), ""},
		{"MIG resource in NVIDIA's +me spelling", ts(devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb.me", Replicas: 2}), ""},
		{"renamed to .shared", ts(devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: "nvidia.com/gpu.shared", Replicas: 2}), ""},
		{"GPU subset by index and UUID", ts(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 2, Devices: []string{"0", "GPU-abc", "3:1"}}), ""},
		{"first two GPUs", ts(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 2, DeviceCount: 2}), ""},
		{"replicas together with resources", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 2, Resources: []devices.ReplicatedResource{gpu(2)}}, "sharing.replicas: 2 set together with sharing.resources"},
		{"listed twice", ts(gpu(2), gpu(3)), "sharing.resources[1].name: nvidia.com/gpu is listed twice"},
		{"not replicable", ts(devices.ReplicatedResource{Name: "gantry.dev/gpu-milli", Replicas: 2}), `sharing.resources[0].name: "gantry.dev/gpu-milli" is not replicable`},
		{"unknown profile", ts(devices.ReplicatedResource{Name: "nvidia.com/mig-9g.99gb", Replicas: 2}), `A100-SXM4-40GB has no MIG profile "9g.99gb"`},
		{"zero replicas", ts(gpu(0)), "sharing.resources[0].replicas: nvidia.com/gpu needs at least 1 replica, got 0"},
		{"foreign rename", ts(devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: "example.com/gpu", Replicas: 2}), `rename: "example.com/gpu"`},
		{"count and list", ts(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 2, DeviceCount: 1, Devices: []string{"0"}}), "a count and a list are exclusive"},
		{"bad device", ts(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 2, Devices: []string{"zero"}}), `devices: "zero"`},
		{"MPS on MIG", devices.Sharing{Mode: devices.MPS, Resources: []devices.ReplicatedResource{{Name: "nvidia.com/mig-1g.5gb", Replicas: 2}}}, "MPS replicates whole GPUs only"},
		{"MPS limit too large per resource", devices.Sharing{Mode: devices.MPS, MPSMemoryLimit: 20480, Resources: []devices.ReplicatedResource{gpu(3)}}, "sharing.resources[0]: sharing.mpsMemoryLimit: 3 replicas x 20480 MiB exceeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := devices.ValidateSharing(a100, tc.s)
			wantErr(t, err, tc.wantErr)
		})
	}
}

func TestAdvertisedName(t *testing.T) {
	tests := []struct {
		name     string
		rename   bool
		resource devices.ReplicatedResource
		want     resources.Name
	}{
		{"kept", false, devices.ReplicatedResource{Name: resources.NvidiaGPU}, "nvidia.com/gpu"},
		{"renameByDefault", true, devices.ReplicatedResource{Name: resources.NvidiaGPU}, "nvidia.com/gpu.shared"},
		{"MIG renameByDefault", true, devices.ReplicatedResource{Name: "nvidia.com/mig-1g.5gb"}, "nvidia.com/mig-1g.5gb.shared"},
		{"explicit rename wins", true, devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPU}, "nvidia.com/gpu"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := devices.Sharing{Mode: devices.TimeSlicing, RenameByDefault: tc.rename}
			if got := s.AdvertisedName(tc.resource); got != tc.want {
				t.Errorf("advertised as %s, want %s", got, tc.want)
			}
		})
	}
}

func TestForGPUSelectsDevices(t *testing.T) {
	s := devices.Sharing{Mode: devices.TimeSlicing, RenameByDefault: true, Resources: []devices.ReplicatedResource{
		{Name: resources.NvidiaGPU, Replicas: 3, Devices: []string{"1", "GPU-u5"}},
	}}
	var got []string
	for i := 0; i < 6; i++ {
		g := s.ForGPU(devices.DeviceRef{Position: i, Index: fmt.Sprint(i), UUID: fmt.Sprintf("GPU-u%d", i)})
		got = append(got, fmt.Sprintf("%s/%d/%v", g.EffectiveMode(), g.Replicas, g.RenameByDefault))
	}
	want := "[exclusive/0/false time-slicing/3/true exclusive/0/false exclusive/0/false exclusive/0/false time-slicing/3/true]"
	if fmt.Sprint(got) != want {
		t.Errorf("per GPU %v, want %s", got, want)
	}
	count := devices.Sharing{Mode: devices.MPS, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 2, DeviceCount: 1}}}
	if a, b := count.ForGPU(devices.DeviceRef{Position: 0}), count.ForGPU(devices.DeviceRef{Position: 1}); a.Replicas != 2 || b.EffectiveMode() != devices.Exclusive {
		t.Errorf("devices: 1 gives %+v and %+v, want the first GPU replicated only", a, b)
	}
	plain := devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}
	if g := plain.ForGPU(devices.DeviceRef{Position: 7}); g.Replicas != 4 {
		t.Errorf("without resources every GPU keeps the node's replicas, got %+v", g)
	}
}

func TestCheckContainerReplicas(t *testing.T) {
	tests := []struct {
		name string
		s    devices.Sharing
		n    int64
		// refused: the container is refused.
		refused bool
	}{
		{"MPS one", devices.Sharing{Mode: devices.MPS, Replicas: 4}, 1, false},
		{"MPS two, whatever the flag says", devices.Sharing{Mode: devices.MPS, Replicas: 4}, 2, true},
		{"time-slicing two, NVIDIA's default", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}, 2, false},
		{"time-slicing two, failRequestsGreaterThanOne", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4, FailRequestsGreaterThanOne: true}, 2, true},
		{"exclusive eight", devices.Sharing{FailRequestsGreaterThanOne: true}, 8, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.CheckContainerReplicas(resources.NvidiaGPU, tc.n)
			if (err != nil) != tc.refused {
				t.Fatalf("error %v, refused want %v", err, tc.refused)
			}
			if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("maximum request size for shared resources is 1; found %d", tc.n)) {
				t.Errorf("error %q does not say NVIDIA's reason", err)
			}
		})
	}
}

func TestMPSClientLimits(t *testing.T) {
	tests := []struct {
		name        string
		limit       resources.MiB
		total       resources.MiB
		replicas    int
		wantMem     resources.MiB
		wantThreads int
	}{
		{"A100-40GB / 4", 0, 40960, 4, 10240, 25},
		{"H100 NVML memory / 3, rounded down", 0, 81559, 3, 27186, 33},
		{"configured limit wins", 8000, 40960, 4, 8000, 25},
		{"one replica", 0, 24576, 1, 24576, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := devices.Sharing{Mode: devices.MPS, MPSMemoryLimit: tc.limit}
			if got := s.MPSClientMemory(tc.total, tc.replicas); got != tc.wantMem {
				t.Errorf("memory %d MiB, want %d", got, tc.wantMem)
			}
			if got := devices.MPSThreadPercentage(tc.replicas); got != tc.wantThreads {
				t.Errorf("threads %d%%, want %d", got, tc.wantThreads)
			}
		})
	}
}

// The replicas' limits on one device never add up to more than the device.
func TestMPSClientsFitTheDeviceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		total := resources.MiB(rapid.Int64Range(1, 200_000).Draw(t, "total"))
		replicas := rapid.IntRange(1, 64).Draw(t, "replicas")
		mem := devices.Sharing{Mode: devices.MPS}.MPSClientMemory(total, replicas)
		if mem*resources.MiB(replicas) > total || (mem+1)*resources.MiB(replicas) <= total {
			t.Fatalf("%d replicas x %d MiB on %d MiB: not the largest equal split", replicas, mem, total)
		}
		if p := devices.MPSThreadPercentage(replicas); p*replicas > 100 {
			t.Fatalf("%d replicas x %d%% threads exceed 100%%", replicas, p)
		}
	})
}
