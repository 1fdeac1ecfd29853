package manifest

import (
	gt "github.com/gantry-sched/gantry/internal/testing"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// draClasses are NVIDIA's two DeviceClasses.
const draClasses = gt.NVIDIADeviceClassesYAML

// draTemplate is a ResourceClaimTemplate "name" in namespace ns asking for count devices
// of class with the given extra request lines (indented under exactly).
func draTemplate(ns, name, class string, count int, extra string) string {
	return `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: ` + name + `
  namespace: ` + ns + `
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: ` + class + `
          count: ` + strconv.Itoa(count) + `
` + extra
}

// draJob is a 2-pod Job in namespace ns whose pods name template tmpl as claim "gpu".
func draJob(ns, name, podClaims, containerClaim string) string {
	return `apiVersion: batch/v1
kind: Job
metadata:
  name: ` + name + `
  namespace: ` + ns + `
  labels:
    kueue.x-k8s.io/queue-name: q
spec:
  parallelism: 2
  completions: 2
  template:
    spec:
      restartPolicy: Never
` + podClaims + `      containers:
      - name: main
        image: x
        resources:
          requests:
            cpu: "1"
          claims:
          - name: ` + containerClaim + `
`
}

const gpuPodClaims = `      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: two-gpus
`

// A job asking through a claim template gets the claim resolved and its devices
// counted as nvidia.com/gpu in its requests, as its extended-resource twin would.
func TestLoadDRAJobCountsClaimsAsQuota(t *testing.T) {
	in := docs(queueSetup(), draClasses, draTemplate("ns", "two-gpus", "gpu.nvidia.com", 2, ""), draJob("ns", "train", gpuPodClaims, "gpu"))
	objs, err := LoadBytes("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Workloads) != 1 || len(objs.Workloads[0].PodSets) != 1 {
		t.Fatalf("workloads %+v", objs.Workloads)
	}
	ps := objs.Workloads[0].PodSets[0]
	if len(ps.Claims) != 1 || ps.Claims[0].Spec == nil || ps.Claims[0].ResourceClaimTemplateName != "two-gpus" {
		t.Fatalf("claims %+v, want one resolved from two-gpus", ps.Claims)
	}
	if got := ps.Claims[0].Containers; len(got) != 1 || got[0] != "main" {
		t.Errorf("containers using the claim %v, want [main]", got)
	}
	if got := ps.Requests[resources.NvidiaGPU]; got != 2 {
		t.Errorf("nvidia.com/gpu in requests %d, want 2 (the claim's devices); requests %v", got, ps.Requests)
	}
	if len(objs.DeviceClasses) != 2 || len(objs.ResourceClaimTemplates) != 1 {
		t.Errorf("DeviceClasses %d, templates %d; want 2 and 1", len(objs.DeviceClasses), len(objs.ResourceClaimTemplates))
	}
}

// Bad DRA input is a load error naming the file and line, the object and the field.
func TestLoadDRAErrors(t *testing.T) {
	base := docs(queueSetup(), draClasses)
	cases := []struct {
		name  string
		input string
		want  string // "line: Kind name: field: message" fragment
	}{
		{"unknown field in a DeviceClass",
			"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: x\nspec:\n  colour: red\n",
			`in.yaml:6: DeviceClass x: spec.colour: unknown field "colour"`},
		{"wrong type in a template",
			strings.Replace(draTemplate("ns", "t", "gpu.nvidia.com", 2, ""), "count: 2", "count: two", 1),
			`ResourceClaimTemplate ns/t: spec.spec.devices.requests[0].exactly.count: wrong type: expected an integer`},
		{"a beta apiVersion",
			"apiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata:\n  name: x\n",
			`in.yaml:1: DeviceClass x: apiVersion: kind DeviceClass is not read under apiVersion "resource.k8s.io/v1beta1"; supported: resource.k8s.io/v1`},
		{"a selector that does not compile",
			draTemplate("ns", "t", "gpu.nvidia.com", 1, "          selectors:\n          - cel:\n              expression: device.attributes[\n"),
			`ResourceClaimTemplate ns/t: spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: `},
		{"a DeviceClass selector that does not compile",
			"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata:\n  name: bad\nspec:\n  selectors:\n  - cel:\n      expression: 1 +\n",
			`in.yaml:8: DeviceClass bad: spec.selectors[0].cel.expression: `},
		{"a claim naming a missing DeviceClass",
			draTemplate("ns", "t", "tpu.example.com", 1, ""),
			`ResourceClaimTemplate ns/t: spec.spec.devices.requests[0].exactly.deviceClassName: DeviceClass "tpu.example.com" not found`},
		{"a pod naming a missing template",
			draJob("ns", "train", gpuPodClaims, "gpu"),
			`Job ns/train: spec.template.spec.resourceClaims[0].resourceClaimTemplateName: pod set "main": claim "gpu": ResourceClaimTemplate "two-gpus" not found in namespace ns`},
		{"a container naming no pod claim",
			docs(draTemplate("ns", "two-gpus", "gpu.nvidia.com", 2, ""), draJob("ns", "train", gpuPodClaims, "gpus")),
			`Job ns/train: spec.template.spec.containers[0].resources.claims[0].name: claim "gpus" is not in the pod's spec.resourceClaims`},
		{"a pod claim with two sources",
			docs(draTemplate("ns", "two-gpus", "gpu.nvidia.com", 2, ""), draJob("ns", "train", gpuPodClaims+"        resourceClaimName: shared\n", "gpu")),
			`Job ns/train: spec.template.spec.resourceClaims[0]: set either resourceClaimName or resourceClaimTemplateName, not both`},
		{"a slice with a device named twice",
			"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n  name: s\nspec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n  pool:\n    name: n1\n    generation: 1\n    resourceSliceCount: 1\n  devices:\n  - name: gpu-0\n  - name: gpu-0\n",
			`in.yaml:14: ResourceSlice s: spec.devices[1].name: duplicate device name "gpu-0": already spec.devices[0]`},
		{"a Kueue mapping naming a class twice",
			"apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nresources:\n  deviceClassMappings:\n  - name: nvidia.com/gpu\n    deviceClassNames: [gpu.nvidia.com]\n  - name: example.com/gpu\n    deviceClassNames:\n    - gpu.nvidia.com\n",
			`resources.deviceClassMappings[1].deviceClassNames[0]: DeviceClass "gpu.nvidia.com" is already mapped to nvidia.com/gpu`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			list := loadErrors(t, docs(c.input, base)) // the input first: its lines are the file's
			if len(list) == 0 {
				t.Fatalf("loaded without error, want %q", c.want)
			}
			if !strings.Contains(list.Error(), c.want) {
				t.Errorf("errors:\n%s\nwant one containing %q", list.Error(), c.want)
			}
		})
	}
}

// A folder holding the variant marker is left out when its parent is read (it would
// define its objects twice) and read when named itself.
func TestLoadSkipsVariantFoldersOfAParent(t *testing.T) {
	dir := t.TempDir()
	variant := filepath.Join(dir, "dra")
	if err := os.MkdirAll(variant, 0o755); err != nil {
		t.Fatal(err)
	}
	ns := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n"
	for path, data := range map[string]string{
		filepath.Join(dir, "ns.yaml"):         ns,
		filepath.Join(variant, "ns.yaml"):     ns,
		filepath.Join(variant, VariantMarker): "variant of the parent\n",
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{dir, variant} {
		objs, err := Load([]string{path}, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(objs.Namespaces) != 1 {
			t.Errorf("%s: %d namespaces read, want 1", path, len(objs.Namespaces))
		}
	}
}
