package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// timeSlicedMIG is NVIDIA's time-sliced MIG: the balanced layout, mixed strategy, each
// 1g.5gb device advertised as replicas.
func timeSlicedMIG(t *testing.T, replicas int, rename bool) (*nodeagent.Discovery, *nodeagent.Inventory) {
	t.Helper()
	return mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Sharing(devices.Sharing{
		Mode: devices.TimeSlicing, MIGStrategy: devices.MIGMixed, RenameByDefault: rename,
		Resources: []devices.ReplicatedResource{{Name: "nvidia.com/mig-1g.5gb", Replicas: replicas}},
	}).Inventory()
}

func TestInventoryPerResourceReplicas(t *testing.T) {
	gpuEntry := func(e devices.ReplicatedResource) func(*testing.T) (*nodeagent.Discovery, *nodeagent.Inventory) {
		return func(t *testing.T) (*nodeagent.Discovery, *nodeagent.Inventory) {
			return mocknode.MakeNode(t).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Resources: []devices.ReplicatedResource{e}}).Inventory()
		}
	}
	tests := []struct {
		name string
		node func(*testing.T) (*nodeagent.Discovery, *nodeagent.Inventory)
		// want is each advertised resource with its device count; firstIDs the first ID
		// of each resource, in resource order.
		want, firstIDs string
	}{
		{"GPUs 1 and 6 x2, renamed; the rest whole under nvidia.com/gpu",
			gpuEntry(devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2, Devices: []string{"1", "6"}}),
			"map[nvidia.com/gpu:6 nvidia.com/gpu.shared:4]", "[GPU-0 GPU-1/replica-0]"},
		{"first three GPUs x4", gpuEntry(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 4, DeviceCount: 3}),
			"map[nvidia.com/gpu:17]", "[GPU-0/replica-0]"},
		{"time-sliced MIG 1g.5gb x3", func(t *testing.T) (*nodeagent.Discovery, *nodeagent.Inventory) { return timeSlicedMIG(t, 3, false) },
			"map[nvidia.com/mig-1g.5gb:48 nvidia.com/mig-2g.10gb:8 nvidia.com/mig-3g.20gb:8]",
			"[GPU-0/mig-1g.5gb@2/replica-0 GPU-0/mig-2g.10gb@0 GPU-0/mig-3g.20gb@4]"},
		{"time-sliced MIG renamed by default", func(t *testing.T) (*nodeagent.Discovery, *nodeagent.Inventory) { return timeSlicedMIG(t, 2, true) },
			"map[nvidia.com/mig-1g.5gb.shared:32 nvidia.com/mig-2g.10gb:8 nvidia.com/mig-3g.20gb:8]",
			"[GPU-0/mig-1g.5gb@2/replica-0 GPU-0/mig-2g.10gb@0 GPU-0/mig-3g.20gb@4]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, inv := tc.node(t)
			got := map[resources.Name]int{}
			var first []string
			for _, r := range inv.Resources() {
				got[r] = len(inv.Devices(r))
				first = append(first, inv.Devices(r)[0].ID)
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("resources %v, want %s", got, tc.want)
			}
			if fmt.Sprint(first) != tc.firstIDs {
				t.Errorf("first devices %v, want %s", first, tc.firstIDs)
			}
		})
	}
}

func TestAllocateReplicaRequests(t *testing.T) {
	tests := []struct {
		name    string
		sharing devices.Sharing
		ids     []string
		// wantErr is a fragment of the error; empty means allocated.
		wantErr string
	}{
		{"MPS one replica", devices.Sharing{Mode: devices.MPS, Replicas: 4}, []string{"GPU-1/replica-2"}, ""},
		{"MPS two replicas of one GPU", devices.Sharing{Mode: devices.MPS, Replicas: 4}, []string{"GPU-1/replica-0", "GPU-1/replica-3"},
			"pod ml/p: allocate 2 nvidia.com/gpu: nvidia.com/gpu is shared (mps): maximum request size for shared resources is 1; found 2"},
		{"MPS two GPUs, failRequestsGreaterThanOne ignored as NVIDIA does", devices.Sharing{Mode: devices.MPS, Replicas: 2, FailRequestsGreaterThanOne: false},
			[]string{"GPU-0/replica-0", "GPU-1/replica-0"}, "found 2"},
		{"time-slicing two, NVIDIA's default allows", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}, []string{"GPU-1/replica-0", "GPU-2/replica-0"}, ""},
		{"time-slicing two with failRequestsGreaterThanOne", devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4, FailRequestsGreaterThanOne: true},
			[]string{"GPU-1/replica-0", "GPU-2/replica-0"}, "maximum request size for shared resources is 1; found 2"},
		{"whole GPUs are never limited", devices.Sharing{FailRequestsGreaterThanOne: true}, []string{"GPU-0", "GPU-1", "GPU-2"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, inv := mocknode.MakeNode(t).Sharing(tc.sharing).Inventory()
			pod := nodeagent.Pod{Namespace: "ml", Name: "p"}
			ca, err := nodeagent.NewAllocator(inv, fakePods{pod: pod}, "").Allocate(context.Background(), resources.NvidiaGPU, tc.ids)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error %v, want the devices", err)
			case tc.wantErr == "" && fmt.Sprint(ca.IDs) != fmt.Sprint(tc.ids):
				t.Errorf("allocated %v, want %v", ca.IDs, tc.ids)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestAllocateMPSLimitsPerReplica(t *testing.T) {
	tests := []struct {
		name     string
		sharing  devices.Sharing
		id       string
		wantMem  string
		wantThr  string
		resource resources.Name
	}{
		// The DGX A100's GPUs report 40960 MiB.
		{"x3: memory over replicas, rounded down", devices.Sharing{Mode: devices.MPS, Replicas: 3}, "GPU-5/replica-2", "0=13653M", "33", resources.NvidiaGPU},
		{"x4 renamed", devices.Sharing{Mode: devices.MPS, Replicas: 4, RenameByDefault: true}, "GPU-0/replica-0", "0=10240M", "25", resources.NvidiaGPUShared},
		{"configured limit", devices.Sharing{Mode: devices.MPS, Replicas: 4, MPSMemoryLimit: 8192}, "GPU-0/replica-1", "0=8192M", "25", resources.NvidiaGPU},
		{"per-resource x8 on GPU 7 only", devices.Sharing{Mode: devices.MPS, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 8, Devices: []string{"7"}}}},
			"GPU-7/replica-7", "0=5120M", "12", resources.NvidiaGPU},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, inv := mocknode.MakeNode(t).Sharing(tc.sharing).Inventory()
			ca, err := nodeagent.NewAllocator(inv, nil, "/run/mps").Allocate(context.Background(), tc.resource, []string{tc.id})
			if err != nil {
				t.Fatal(err)
			}
			gpu, _ := devices.GPUOfID(tc.id)
			want := map[string]string{
				nodeagent.EnvVisibleDevices: d.GPUs[gpu].UUID,
				nodeagent.EnvMPSPipeDir:     "/run/mps",
				nodeagent.EnvMPSMemLimit:    tc.wantMem,
				nodeagent.EnvMPSThreads:     tc.wantThr,
			}
			for k, v := range want {
				if ca.Envs[k] != v {
					t.Errorf("%s=%q, want %q", k, ca.Envs[k], v)
				}
			}
			if len(ca.Mounts) != 1 || ca.Mounts[0].HostPath != "/run/mps" {
				t.Errorf("mounts %+v, want the pipe directory", ca.Mounts)
			}
		})
	}
}

func TestTimeSlicedMIGAllocationAndHealth(t *testing.T) {
	d, inv := timeSlicedMIG(t, 2, false)
	const res = "nvidia.com/mig-1g.5gb"
	ca, err := nodeagent.NewAllocator(inv, nil, "").Allocate(context.Background(), res, []string{"GPU-4/mig-1g.5gb@3/replica-1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := migUUID(t, d, 4, 3); ca.Envs[nodeagent.EnvVisibleDevices] != want {
		t.Errorf("%s=%q, want the MIG device's UUID %q", nodeagent.EnvVisibleDevices, ca.Envs[nodeagent.EnvVisibleDevices], want)
	}
	if _, ok := ca.Envs[nodeagent.EnvMPSMemLimit]; ok {
		t.Errorf("time-slicing set MPS limits: %v", ca.Envs)
	}
	changed := inv.SetDeviceHealth("GPU-4/mig-1g.5gb@3", false)
	if fmt.Sprint(changed) != "[GPU-4/mig-1g.5gb@3/replica-0 GPU-4/mig-1g.5gb@3/replica-1]" {
		t.Errorf("an error on the MIG device changed %v, want both its replicas", changed)
	}
}

func TestPreferredTimeSlicedMIGBestFit(t *testing.T) {
	_, inv := timeSlicedMIG(t, 3, false)
	const res = "nvidia.com/mig-1g.5gb"
	available := []string{
		"GPU-0/mig-1g.5gb@2/replica-0", "GPU-0/mig-1g.5gb@2/replica-1", "GPU-0/mig-1g.5gb@2/replica-2",
		"GPU-1/mig-1g.5gb@3/replica-2", // the other two replicas are held: the fullest device
		"GPU-2/mig-1g.5gb@2/replica-0", "GPU-2/mig-1g.5gb@2/replica-1",
	}
	tests := []struct {
		name        string
		mustInclude []string
		size        int
		want        string
	}{
		{"fullest first", nil, 1, "[GPU-1/mig-1g.5gb@3/replica-2]"},
		{"then the next fullest", nil, 3, "[GPU-1/mig-1g.5gb@3/replica-2 GPU-2/mig-1g.5gb@2/replica-0 GPU-2/mig-1g.5gb@2/replica-1]"},
		{"must include kept first", []string{"GPU-0/mig-1g.5gb@2/replica-2"}, 2, "[GPU-0/mig-1g.5gb@2/replica-2 GPU-1/mig-1g.5gb@3/replica-2]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := inv.Preferred(res, available, tc.mustInclude, tc.size)
			if err != nil || fmt.Sprint(got) != tc.want {
				t.Errorf("preferred %v %v, want %s", got, err, tc.want)
			}
		})
	}
	if _, err := inv.Preferred(res, []string{"GPU-9/mig-1g.5gb@0/replica-0", "GPU-0/mig-1g.5gb@2/replica-0"}, nil, 2); err == nil {
		t.Error("an unknown available device still filled the request")
	}
}

// GFD's labels say which resources are replicated: per-resource whole-GPU replicas and
// time-sliced MIG profiles.
func TestLabelsOfReplicatedResources(t *testing.T) {
	d, _ := timeSlicedMIG(t, 3, false)
	s := devices.Sharing{Mode: devices.TimeSlicing, MIGStrategy: devices.MIGMixed,
		Resources: []devices.ReplicatedResource{{Name: "nvidia.com/mig-1g.5gb", Replicas: 3}}}
	l := nodeagent.Labels(d, s)
	for k, v := range map[string]string{
		"nvidia.com/mig-1g.5gb.replicas": "3", "nvidia.com/mig-1g.5gb.sharing-strategy": "time-slicing",
		"nvidia.com/mig-2g.10gb.replicas": "1", "nvidia.com/mig-2g.10gb.sharing-strategy": "none",
	} {
		if l[k] != v {
			t.Errorf("label %s = %q, want %q", k, l[k], v)
		}
	}
	whole, _ := mocknode.MakeNode(t).Sharing(devices.Sharing{Mode: devices.TimeSlicing,
		Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 5}}}).Inventory()
	l = nodeagent.Labels(whole, devices.Sharing{Mode: devices.TimeSlicing, Resources: []devices.ReplicatedResource{{Name: resources.NvidiaGPU, Replicas: 5}}})
	if l["nvidia.com/gpu.replicas"] != "5" || l["nvidia.com/gpu.product"] != "NVIDIA-A100-SXM4-40GB-SHARED" {
		t.Errorf("whole-GPU replicas: replicas %q product %q, want 5 and the -SHARED product", l["nvidia.com/gpu.replicas"], l["nvidia.com/gpu.product"])
	}
}

// A time-sliced MIG GPU is described as the scheduler describes it (mode mig plus the
// MIG resource entries), so the device model built from the discovered GPUs alone
// offers exactly what the agent advertises.
func TestDiscoveredTimeSlicedMIGMatchesTheDeviceModel(t *testing.T) {
	for _, rename := range []bool{false, true} {
		d, inv := timeSlicedMIG(t, 3, rename)
		gpus := make([]devices.GPU, len(d.GPUs))
		for i, g := range d.GPUs {
			gpus[i] = g.GPU
			if g.Sharing.Mode != devices.MIG || len(g.Sharing.Resources) != 1 {
				t.Fatalf("GPU %d sharing %+v, want mode mig with the 1g.5gb entry", i, g.Sharing)
			}
		}
		nd, err := devices.NewNodeDevices(gpus)
		if err != nil {
			t.Fatal(err)
		}
		capacity := nd.Capacity()
		for _, r := range inv.Resources() {
			if got, want := int(capacity[r]), len(inv.Devices(r)); got != want {
				t.Errorf("rename %t: %s: the device model offers %d, the agent advertises %d", rename, r, got, want)
			}
		}
	}
}
