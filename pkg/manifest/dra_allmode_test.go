package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// allTemplate is a ResourceClaimTemplate "two-gpus" (the name gpuPodClaims names) in
// namespace ns asking with allocationMode All for every whole GPU whose product name
// holds product.
func allTemplate(ns, product string) string {
	return `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: two-gpus
  namespace: ` + ns + `
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: All
          selectors:
          - cel:
              expression: device.attributes["gpu.nvidia.com"].productName.contains("` + product + `")
`
}

// An allocationMode All claim loads from files when their nodes have a device it
// matches, and counts against quota the most it matches on one node; with no such
// node it is a load error at the template's allocationMode field.
func TestLoadDRAAllocationModeAll(t *testing.T) {
	h100x8 := k8s.MakeNodePool("h100x8", 2).GPUs("H100-SXM5-80GB", 8).YAML()
	h100x4 := k8s.MakeNodePool("h100x4", 1).GPUs("H100-SXM5-80GB", 4).YAML()
	a100x16 := k8s.MakeNodePool("a100x16", 1).GPUs("A100-SXM4-80GB", 16).YAML()
	cases := []struct {
		name    string
		nodes   []string
		product string
		want    resources.Amount // nvidia.com/gpu per pod
		wantErr string
	}{
		{"the largest H100 node", []string{h100x4, h100x8, a100x16}, "H100", 8, ""},
		{"the A100 node", []string{h100x8, a100x16}, "A100", 16, ""},
		{"no node has a matching GPU", []string{a100x16}, "H100", 0,
			`ResourceClaimTemplate ns/two-gpus: spec.spec.devices.requests[0].exactly.allocationMode: All: no node of the cluster has a gpu device the request's selectors match`},
		{"no nodes at all", nil, "H100", 0, "spec.spec.devices.requests[0].exactly.allocationMode: All: no node of the cluster"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parts := append([]string{queueSetup(), draClasses, allTemplate("ns", c.product), draJob("ns", "train", gpuPodClaims, "gpu")}, c.nodes...)
			objs, err := LoadBytes("in.yaml", []byte(docs(parts...)))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ps := objs.Workloads[0].PodSets[0]
			if got := ps.Requests[resources.NvidiaGPU]; got != c.want {
				t.Errorf("nvidia.com/gpu per pod %d, want %d; requests %v", got, c.want, ps.Requests)
			}
		})
	}
}
