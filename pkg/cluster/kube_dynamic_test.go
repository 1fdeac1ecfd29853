package cluster_test

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// A live Node whose MIG manager config is all-dynamic has GPUs no device plugin
// advertises (NVIDIA's DRA driver serves them): NodeFromKube builds them from GFD's
// count and product labels, each with its MIG layout chosen at allocation time.
func TestNodeFromKubeDynamicMIG(t *testing.T) {
	labels := func(extra map[string]string) map[string]string {
		l := map[string]string{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "2",
			"nvidia.com/mig.config": "all-dynamic", "nvidia.com/mig.strategy": "mixed"}
		for k, v := range extra {
			if v == "" {
				delete(l, k)
				continue
			}
			l[k] = v
		}
		return l
	}
	tests := []struct {
		name   string
		labels map[string]string
		alloc  map[string]string
		// gpus is how many dynamic GPUs the node gets; wantErr and wantWarn fragments of
		// the error and of a warning.
		gpus              int
		wantErr, wantWarn string
	}{
		{"nothing advertised", labels(nil), nil, 2, "", ""},
		{"single strategy", labels(map[string]string{"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.count": "4"}), nil, 4, "", ""},
		{"a device plugin advertises too", labels(nil), map[string]string{"nvidia.com/gpu": "2"}, 2, "",
			"only DRA claims get these GPUs"},
		{"no count", labels(map[string]string{"nvidia.com/gpu.count": ""}), nil, 0, "metadata.labels[nvidia.com/gpu.count]", ""},
		{"no MIG", labels(map[string]string{"nvidia.com/gpu.product": "NVIDIA-L4"}), nil, 0, "does not support MIG", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := cluster.NodeFromKube(kubeNode(tc.labels, tc.alloc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), `node "gpu-1"`) {
					t.Fatalf("error %v, want one naming the node and saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Devices == nil {
				t.Fatalf("no GPUs (warnings %v)", n.Warnings)
			}
			gpus := n.Devices.GPUs()
			if len(gpus) != tc.gpus {
				t.Fatalf("%d GPUs, want %d", len(gpus), tc.gpus)
			}
			for _, g := range gpus {
				if !g.Sharing.DynamicMIG() || len(g.Instances) != 0 || string(g.Model) != "A100-SXM4-40GB" {
					t.Errorf("GPU %d: %s %+v %v, want a dynamic A100-SXM4-40GB without instances", g.Index, g.Model, g.Sharing, g.Instances)
				}
			}
			// Every GPU could hold two 3g.20gb; none is advertised to the device plugin.
			if got := n.Devices.Capacity()["nvidia.com/mig-3g.20gb"]; got != resources.Amount(2*tc.gpus) {
				t.Errorf("nvidia.com/mig-3g.20gb capacity %d, want %d", got, 2*tc.gpus)
			}
			if n.Allocatable[resources.NvidiaGPU] != 0 {
				t.Errorf("allocatable keeps %s", n.Allocatable)
			}
			warned := ""
			for _, w := range n.Warnings {
				warned += w.Message + "\n"
			}
			if (tc.wantWarn == "") != (warned == "") || !strings.Contains(warned, tc.wantWarn) {
				t.Errorf("warnings %q, want %q", warned, tc.wantWarn)
			}
		})
	}
}
