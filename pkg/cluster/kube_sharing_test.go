package cluster_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// NodeFromKube on nodes whose device plugin replicates resources one at a time: a subset
// of the GPUs, or time-sliced MIG devices, read from GFD's labels and the advertised
// counts.
func TestNodeFromKubePerResourceSharing(t *testing.T) {
	a100 := func(extra map[string]string) map[string]string {
		l := map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8"}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	balanced := func(extra map[string]string) map[string]string {
		l := a100(map[string]string{"nvidia.com/mig.config": "all-balanced", "nvidia.com/mig.strategy": "mixed"})
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	sliced1g := map[string]string{"nvidia.com/mig-1g.5gb.sharing-strategy": "time-slicing", "nvidia.com/mig-1g.5gb.replicas": "3"}
	tests := []struct {
		name   string
		labels map[string]string
		alloc  map[string]string
		// want is the device capacity under the plugin's names; wantErr a fragment of the
		// error; wantWarn a fragment of a warning.
		want, wantErr, wantWarn string
	}{
		{"every GPU x4", a100(map[string]string{"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}),
			map[string]string{"nvidia.com/gpu": "32"}, "nvidia.com/gpu=32", "", ""},
		{"three GPUs x4", a100(map[string]string{"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}),
			map[string]string{"nvidia.com/gpu": "17"}, "nvidia.com/gpu=17", "", "3 of 8 nvidia.com/gpu devices are replicated 4 times"},
		{"two GPUs x2 renamed, the rest whole", a100(map[string]string{"nvidia.com/gpu.replicas": "2", "nvidia.com/gpu.sharing-strategy": "mps"}),
			map[string]string{"nvidia.com/gpu": "6", "nvidia.com/gpu.shared": "4"}, "nvidia.com/gpu=6,nvidia.com/gpu.shared=4", "", "assuming the first 2"},
		{"time-sliced MIG x3", balanced(sliced1g),
			map[string]string{"nvidia.com/mig-1g.5gb": "48", "nvidia.com/mig-2g.10gb": "8", "nvidia.com/mig-3g.20gb": "8"},
			"nvidia.com/mig-1g.5gb=48,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "", ""},
		{"time-sliced MIG renamed", balanced(sliced1g),
			map[string]string{"nvidia.com/mig-1g.5gb.shared": "48", "nvidia.com/mig-2g.10gb": "8", "nvidia.com/mig-3g.20gb": "8"},
			"nvidia.com/mig-1g.5gb.shared=48,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "", ""},
		{"time-sliced MIG on some devices", balanced(sliced1g),
			map[string]string{"nvidia.com/mig-1g.5gb": "20", "nvidia.com/mig-2g.10gb": "8", "nvidia.com/mig-3g.20gb": "8"},
			"nvidia.com/mig-1g.5gb=20,nvidia.com/mig-2g.10gb=8,nvidia.com/mig-3g.20gb=8", "", "2 of 16 nvidia.com/mig-1g.5gb devices are replicated 3 times"},
		{"MIG single x2", a100(map[string]string{"nvidia.com/mig.config": "all-1g.5gb", "nvidia.com/mig.strategy": "single", "nvidia.com/gpu.count": "56", "nvidia.com/gpu.replicas": "2"}),
			map[string]string{"nvidia.com/gpu": "112"}, "nvidia.com/gpu=112", "", ""},
		{"MIG devices under MPS", balanced(map[string]string{"nvidia.com/mig-1g.5gb.sharing-strategy": "mps", "nvidia.com/mig-1g.5gb.replicas": "2"}),
			map[string]string{"nvidia.com/mig-1g.5gb": "32"}, "",
			`node "gpu-1" (<generated>): metadata.labels[nvidia.com/mig-1g.5gb.sharing-strategy]: "mps": MIG devices are shared by time-slicing or not at all`, ""},
		{"no replicas", balanced(map[string]string{"nvidia.com/mig-1g.5gb.sharing-strategy": "time-slicing", "nvidia.com/mig-1g.5gb.replicas": "0"}),
			map[string]string{"nvidia.com/mig-1g.5gb": "16"}, "", "metadata.labels[nvidia.com/mig-1g.5gb.replicas]: \"0\": a time-sliced MIG profile needs at least 1 replica", ""},
		{"counts no selection explains", balanced(sliced1g),
			map[string]string{"nvidia.com/mig-1g.5gb": "19", "nvidia.com/mig-2g.10gb": "8", "nvidia.com/mig-3g.20gb": "8"}, "",
			`node "gpu-1" (<generated>): status.allocatable: nvidia.com/mig-1g.5gb=19 is not what 16 nvidia.com/mig-1g.5gb devices give with 3 replicas each on some of them`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := cluster.NodeFromKube(kubeNode(tc.labels, tc.alloc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := resources.Vector{}
			for name, a := range n.Devices.Capacity() {
				if name != resources.GPUMilli && name != resources.GPUMemory {
					got[name] = a
				}
			}
			if got.String() != tc.want {
				t.Errorf("capacity %s, want %s", got, tc.want)
			}
			var warns []string
			for _, w := range n.Warnings {
				warns = append(warns, w.String())
			}
			if joined := strings.Join(warns, "\n"); tc.wantWarn != "" && !strings.Contains(joined, tc.wantWarn) {
				t.Errorf("warnings %q, want one containing %q", joined, tc.wantWarn)
			}
			if n.GPUCount() != 8 {
				t.Errorf("%d GPUs, want 8", n.GPUCount())
			}
		})
	}
}

// The node agent's annotation says which devices are replicated: the scheduler takes
// exactly those, and refuses an annotation that disagrees with the advertised counts.
func TestNodeFromKubeReplicatedDevicesAnnotation(t *testing.T) {
	labels := map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "8",
		"nvidia.com/gpu.replicas": "2", "nvidia.com/gpu.sharing-strategy": "time-slicing"}
	alloc := map[string]string{"nvidia.com/gpu": "10"} // 6 whole + 2 GPUs x 2 replicas
	for _, tc := range []struct{ name, annotation, wantErr string }{
		{"GPUs 1 and 6", "nvidia.com/gpu=1,6", ""},
		{"one GPU listed, two replicated", "nvidia.com/gpu=1", "lists 1 nvidia.com/gpu devices but status.allocatable says 2 are replicated"},
		{"malformed", "nvidia.com/gpu", "metadata.annotations[gantry.dev/replicated-devices]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kn := kubeNode(labels, alloc)
			kn.Object.Annotations = map[string]string{devices.AnnotationReplicatedDevices: tc.annotation}
			n, err := cluster.NodeFromKube(kn)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(n.Warnings) != 0 {
				t.Errorf("warnings %v, want none: the annotation says which GPUs", n.Warnings)
			}
			whole := 0
			for _, g := range n.Devices.GPUs() {
				s := g.Sharing.ForGPU(devices.DeviceRef{Position: whole, Index: strconv.Itoa(g.Index)})
				whole++
				if want := g.Index == 1 || g.Index == 6; s.Replicates() != want {
					t.Errorf("GPU %d replicated %t, want %t", g.Index, s.Replicates(), want)
				}
			}
		})
	}
}
