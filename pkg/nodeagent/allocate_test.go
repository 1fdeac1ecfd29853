package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestInventoryResourcesPerSharingMode(t *testing.T) {
	tests := []struct {
		name string
		node func(*mocknode.NodeWrapper) *mocknode.NodeWrapper
		// want is each advertised resource with its device count; firstID the first ID
		// of the first resource.
		want    string
		firstID string
	}{
		{"exclusive", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b }, "map[nvidia.com/gpu:8]", "GPU-0"},
		{"time-slicing x3", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 3})
		}, "map[nvidia.com/gpu:24]", "GPU-0/replica-0"},
		{"mps x2 renamed", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Sharing(devices.Sharing{Mode: devices.MPS, Replicas: 2, RenameByDefault: true})
		}, "map[nvidia.com/gpu.shared:16]", "GPU-0/replica-0"},
		{"MIG single", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper { return b.Layout("all-2g.10gb") }, "map[nvidia.com/gpu:24]", "GPU-0/mig-2g.10gb@0"},
		{"MIG mixed", func(b *mocknode.NodeWrapper) *mocknode.NodeWrapper {
			return b.Strategy(devices.MIGMixed).Layout("all-balanced")
		},
			"map[nvidia.com/mig-1g.5gb:16 nvidia.com/mig-2g.10gb:8 nvidia.com/mig-3g.20gb:8]", "GPU-0/mig-1g.5gb@2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, inv := tc.node(mocknode.MakeNode(t)).Inventory()
			got := map[resources.Name]int{}
			for _, r := range inv.Resources() {
				got[r] = len(inv.Devices(r))
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("resources %v, want %s", got, tc.want)
			}
			if id := inv.Devices(inv.Resources()[0])[0].ID; id != tc.firstID {
				t.Errorf("first device %s, want %s", id, tc.firstID)
			}
		})
	}
}

func TestPreferredKeepsOneNVLinkDomain(t *testing.T) {
	// GPU 0 has lost its links: domains {0} and {1..7}.
	_, inv := mocknode.MakeNode(t).NVLinkDown(0).Inventory()
	got, err := inv.Preferred(resources.NvidiaGPU, []string{"GPU-0", "GPU-1", "GPU-2", "GPU-5"}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	// GPU-1 and GPU-2 share a domain; GPU-0 is alone. Inside the domain the picks stay
	// behind one PCIe switch when they can: GPU-1 (switch 0) and GPU-2 (switch 1) cannot,
	// so the lowest pair in the domain is taken.
	if fmt.Sprint(got) != "[GPU-1 GPU-2]" {
		t.Errorf("preferred %v, want [GPU-1 GPU-2]", got)
	}
	got, err = inv.Preferred(resources.NvidiaGPU, []string{"GPU-2", "GPU-3", "GPU-4", "GPU-5"}, []string{"GPU-4"}, 2)
	if err != nil || len(got) != 2 || got[0] != "GPU-4" {
		t.Errorf("with must-include GPU-4: %v %v, want GPU-4 first", got, err)
	}
	if _, err := inv.Preferred(resources.NvidiaGPU, []string{"GPU-1"}, nil, 2); err == nil {
		t.Error("asking 2 of 1 available: no error")
	}
}

func TestAllocateHonoursAnnotation(t *testing.T) {
	d, inv := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Inventory()
	pod := nodeagent.Pod{Namespace: "ml", Name: "train-0", UID: "u1", Annotations: map[string]string{
		nodeagent.AnnotationDevices: "GPU-3/mig-1g.5gb@3,GPU-5/mig-3g.20gb@4,GPU-6/mig-1g.5gb@2",
	}}
	a := nodeagent.NewAllocator(inv, fakePods{pod: pod}, "")
	ctx := context.Background()
	// The kubelet picked other devices; the annotation wins, in order, container by container.
	first, err := a.Allocate(ctx, "nvidia.com/mig-1g.5gb", []string{"GPU-0/mig-1g.5gb@2"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Allocate(ctx, "nvidia.com/mig-1g.5gb", []string{"GPU-0/mig-1g.5gb@3"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(first.IDs, second.IDs) != "[GPU-3/mig-1g.5gb@3] [GPU-6/mig-1g.5gb@2]" {
		t.Errorf("allocated %v then %v, want the annotated 1g.5gb devices in order", first.IDs, second.IDs)
	}
	if want := migUUID(t, d, 3, 3); first.Envs[nodeagent.EnvVisibleDevices] != want {
		t.Errorf("%s=%q, want the MIG UUID %q", nodeagent.EnvVisibleDevices, first.Envs[nodeagent.EnvVisibleDevices], want)
	}
	if _, err := a.Allocate(ctx, "nvidia.com/mig-1g.5gb", []string{"GPU-0/mig-1g.5gb@2"}); err == nil || !strings.Contains(err.Error(), "ml/train-0") {
		t.Errorf("third 1g.5gb beyond the annotation: err %v, want one naming the pod", err)
	}
	big, err := a.Allocate(ctx, "nvidia.com/mig-3g.20gb", []string{"GPU-0/mig-3g.20gb@4"})
	if err != nil || fmt.Sprint(big.IDs) != "[GPU-5/mig-3g.20gb@4]" {
		t.Errorf("3g.20gb: %v %v, want GPU-5/mig-3g.20gb@4", big.IDs, err)
	}
}

func TestAllocateRefusals(t *testing.T) {
	_, inv := mocknode.MakeNode(t).Inventory()
	inv.SetHealth(2, false)
	tests := []struct {
		name       string
		annotation string
		kubelet    []string
		// wantErr is a fragment of the error.
		wantErr string
	}{
		{"unknown annotated device", "GPU-9", []string{"GPU-0"}, `"GPU-9" is not on this node`},
		{"unhealthy annotated device", "GPU-2", []string{"GPU-0"}, `"GPU-2" is unhealthy`},
		{"annotation short of the request", "GPU-1", []string{"GPU-0", "GPU-3"}, "has 1 unallocated"},
		{"kubelet pick unknown without annotation", "", []string{"GPU-42"}, `"GPU-42" is not on this node`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := nodeagent.Pod{Namespace: "ns", Name: "p", Annotations: map[string]string{nodeagent.AnnotationDevices: tc.annotation}}
			_, err := nodeagent.NewAllocator(inv, fakePods{pod: pod}, "").Allocate(context.Background(), resources.NvidiaGPU, tc.kubelet)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestAllocateMPSEnvironment(t *testing.T) {
	d, inv := mocknode.MakeNode(t).Sharing(devices.Sharing{Mode: devices.MPS, Replicas: 4}).Inventory()
	ca, err := nodeagent.NewAllocator(inv, nil, "/run/mps").Allocate(context.Background(), resources.NvidiaGPU, []string{"GPU-1/replica-3"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		nodeagent.EnvVisibleDevices: d.GPUs[1].UUID,
		nodeagent.EnvMPSPipeDir:     "/run/mps",
		nodeagent.EnvMPSMemLimit:    "0=10240M", // 40 GiB / 4 replicas
		nodeagent.EnvMPSThreads:     "25",
	}
	for k, v := range want {
		if ca.Envs[k] != v {
			t.Errorf("%s=%q, want %q", k, ca.Envs[k], v)
		}
	}
	if len(ca.Mounts) != 1 || ca.Mounts[0].HostPath != "/run/mps" {
		t.Errorf("mounts %+v, want the pipe directory", ca.Mounts)
	}
}

func TestXIDMarksDevicesUnhealthy(t *testing.T) {
	b := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced")
	d, inv := b.Inventory()
	var events []nodeagent.HealthEvent
	w, err := nodeagent.NewHealthWatcher(b.Server(), d, inv, nodeagent.HealthChecks{}, func(ev nodeagent.HealthEvent) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	changed, cancel := inv.Subscribe()
	defer cancel()
	set := func(gpu int, xid uint64, gi uint32) nvml.EventData {
		h, _ := b.Server().DeviceGetHandleByIndex(gpu)
		ci := uint32(0) // the agent's GPU instances hold one compute instance
		if gi == nodeagent.NoInstance {
			ci = gi
		}
		return nvml.EventData{Device: h, EventType: nvml.EventTypeXidCriticalError, EventData: xid, GpuInstanceId: gi, ComputeInstanceId: ci}
	}
	w.Handle(set(1, 13, nodeagent.NoInstance)) // application XID: ignored
	if len(inv.Unhealthy()) != 0 || len(events) != 0 {
		t.Fatalf("XID 13 marked %v unhealthy", inv.Unhealthy())
	}
	w.Handle(set(1, 79, nodeagent.NoInstance)) // fallen off the bus: whole GPU
	if got := fmt.Sprint(inv.Unhealthy()); got != "[GPU-1/mig-2g.10gb@0 GPU-1/mig-1g.5gb@2 GPU-1/mig-1g.5gb@3 GPU-1/mig-3g.20gb@4]" {
		t.Errorf("after XID 79 on GPU 1: unhealthy %s", got)
	}
	select {
	case <-changed:
	default:
		t.Error("subscribers were not told")
	}
	gi := d.GPUs[4].MIG[3].GpuInstanceID // the 3g.20gb of GPU 4
	w.Handle(set(4, 94, uint32(gi)))     // contained ECC error in one instance
	if len(events) != 2 || fmt.Sprint(events[1].IDs) != "[GPU-4/mig-3g.20gb@4]" || !strings.Contains(events[1].Reason, "XID 94") {
		t.Errorf("events %+v, want the 3g.20gb of GPU 4 alone with XID 94", events)
	}
}

func migUUID(t *testing.T, d *nodeagent.Discovery, gpu, start int) string {
	t.Helper()
	for _, m := range d.GPUs[gpu].MIG {
		if m.Instance.Start == start {
			return m.UUID
		}
	}
	t.Fatalf("GPU %d has no MIG device at %d", gpu, start)
	return ""
}

func TestPreferredSkipsUnhealthyMIGDevice(t *testing.T) {
	_, inv := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Inventory()
	inv.SetDeviceHealth("GPU-0/mig-3g.20gb@4", false)
	// The kubelet offers only healthy devices, but pkg/devices must not pick the sick
	// one on its own either.
	got, err := inv.Preferred("nvidia.com/mig-3g.20gb", []string{"GPU-1/mig-3g.20gb@4"}, nil, 1)
	if err != nil || fmt.Sprint(got) != "[GPU-1/mig-3g.20gb@4]" {
		t.Errorf("preferred %v %v, want [GPU-1/mig-3g.20gb@4]", got, err)
	}
}
