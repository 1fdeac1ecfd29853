package dra_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// nvDevice is a device as NVIDIA's driver publishes it: no gantry.dev attributes.
func nvDevice(name, typ string, attrs map[string]string, caps map[string]string) resourcev1.Device {
	d := resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		dra.AttrType: {StringValue: ptr.To(typ)}}, Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{}}
	for k, v := range attrs {
		var n int64
		if _, err := fmt.Sscanf(v, "int:%d", &n); err == nil {
			d.Attributes[resourcev1.QualifiedName(k)] = resourcev1.DeviceAttribute{IntValue: ptr.To(n)}
			continue
		}
		d.Attributes[resourcev1.QualifiedName(k)] = resourcev1.DeviceAttribute{StringValue: ptr.To(v)}
	}
	for k, v := range caps {
		d.Capacity[resourcev1.QualifiedName(k)] = quantity(v)
	}
	return d
}

func nvSlice(name, node string, generation int64, devs ...resourcev1.Device) resourcev1.ResourceSlice {
	s := resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{Driver: dra.DriverName, NodeName: ptr.To(node),
		Pool: resourcev1.ResourcePool{Name: node, Generation: generation, ResourceSliceCount: 1}, Devices: devs}}
	s.Name = name
	return s
}

const a100 = "NVIDIA A100-SXM4-40GB"

func TestGPUsFromNVIDIADriverSlices(t *testing.T) {
	s := nvSlice("n1-gpu", "n1", 3,
		nvDevice("gpu-0", "gpu", map[string]string{"uuid": "GPU-0", "productName": a100, "index": "int:0",
			"resource.kubernetes.io/pcieRoot": "pci0000:b0"}, map[string]string{"memory": "40Gi"}),
		nvDevice("gpu-1", "gpu", map[string]string{"uuid": "GPU-1", "productName": a100,
			"resource.kubernetes.io/pcieRoot": "pci0000:10"}, map[string]string{"memory": "40Gi"}),
		// Current MIG names, and the pre-25.8 ones (gpu-<minor>-mig-<id>-<start>-<size>).
		nvDevice("gpu-2-mig-3g20gb-9-4", "mig", map[string]string{"parentUUID": "GPU-2", "profile": "3g.20gb",
			"productName": a100, "resource.kubernetes.io/pcieRoot": "pci0000:10", "parentIndex": "int:2"}, nil),
		nvDevice("gpu-2-mig-19-0-1", "mig", map[string]string{"parentUUID": "GPU-2", "profile": "1g.5gb",
			"productName": a100, "resource.kubernetes.io/pcieRoot": "pci0000:10"}, nil),
		nvDevice("gpu-2-mig-1g5gb-me-20-1", "mig", map[string]string{"parentUUID": "GPU-2", "profile": "1g.5gb+me",
			"productName": a100, "resource.kubernetes.io/pcieRoot": "pci0000:10"}, nil),
		// Another product name spelling: GPU Feature Discovery's.
		nvDevice("gpu-3", "gpu", map[string]string{"uuid": "GPU-3", "productName": "NVIDIA-A100-SXM4-40GB"}, nil),
	)
	got, err := dra.GPUsFromSlices("n1", []resourcev1.ResourceSlice{s})
	if err != nil {
		t.Fatal(err)
	}
	want := []kept{
		{Index: 0, Switch: 1, UUID: "GPU-0", Model: "A100-SXM4-40GB", Healthy: true},
		{Index: 1, Switch: 0, UUID: "GPU-1", Model: "A100-SXM4-40GB", Healthy: true},
		{Index: 2, Switch: 0, UUID: "GPU-2", Model: "A100-SXM4-40GB", Healthy: true, Instances: []devices.Instance{
			{Profile: "1g.5gb", Start: 0}, {Profile: "1g.5gb+me", Start: 1}, {Profile: "3g.20gb", Start: 4}}},
		{Index: 3, Switch: 0, UUID: "GPU-3", Model: "A100-SXM4-40GB", Healthy: true},
	}
	if fmt.Sprint(keep(got)) != fmt.Sprint(want) {
		t.Errorf("GPUs\n got %+v\nwant %+v", keep(got), want)
	}
	if got[2].Sharing.Mode != devices.MIG || got[0].Sharing.EffectiveMode() != devices.Exclusive {
		t.Errorf("sharing: GPU 2 %+v, GPU 0 %+v", got[2].Sharing, got[0].Sharing)
	}
}

func TestGPUsFromSlicesPicksNodeDriverAndGeneration(t *testing.T) {
	gs := gpus(t, "L4", 2, devices.Sharing{})
	inv, err := dra.NewNodeInventory("n1", gs)
	if err != nil {
		t.Fatal(err)
	}
	current := inv.Slices()[0]
	current.Spec.Pool.Generation = 5
	stale := nvSlice("old", "n1", 4, nvDevice("gpu-7", "gpu", map[string]string{"productName": "NVIDIA L4"}, nil))
	other := nvSlice("other-node", "n2", 9, nvDevice("gpu-8", "gpu", map[string]string{"productName": "NVIDIA L4"}, nil))
	otherDriver := nvSlice("nic", "n1", 9, nvDevice("gpu-9", "gpu", map[string]string{"productName": "NVIDIA L4"}, nil))
	otherDriver.Spec.Driver = "nic.example.com"
	got, err := dra.GPUsFromSlices("n1", []resourcev1.ResourceSlice{stale, current, other, otherDriver})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keep(got)) != fmt.Sprint(keep(gs)) {
		t.Errorf("GPUs %+v, want only the current generation of n1's %s slices", keep(got), dra.DriverName)
	}
}

func TestGPUsFromSlicesIgnoresOtherDevicesWithAReason(t *testing.T) {
	gpu := nvDevice("gpu-0", "gpu", map[string]string{"uuid": "GPU-0", "productName": a100}, nil)
	cases := []struct {
		name   string
		dev    resourcev1.Device
		reason string
	}{
		{"vfio", nvDevice("gpu-vfio-1", "vfio", nil, nil), `type "vfio"`},
		{"no type", resourcev1.Device{Name: "gpu-4"}, `type ""`},
		{"odd gpu name", nvDevice("gpu-x1", "gpu", map[string]string{"productName": a100}, nil), "named neither"},
		{"mig named as a gpu", nvDevice("gpu-5", "mig", map[string]string{"productName": a100, "profile": "1g.5gb"}, nil), "named neither"},
		{"unknown product, no memory", nvDevice("gpu-6", "gpu", map[string]string{"productName": "NVIDIA Z1"}, nil), "GPU model unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dra.GPUsFromSlices("n", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, gpu, tc.dev)})
			var ignored *dra.IgnoredDevicesError
			if !errors.As(err, &ignored) {
				t.Fatalf("error %v, want an IgnoredDevicesError", err)
			}
			if len(ignored.Devices) != 1 || ignored.Devices[0].Device != tc.dev.Name || ignored.Devices[0].Slice != "s1" ||
				!strings.Contains(ignored.Devices[0].Reason, tc.reason) {
				t.Errorf("ignored %+v, want %s in s1 because %q", ignored.Devices, tc.dev.Name, tc.reason)
			}
			if len(got) != 1 || got[0].UUID != "GPU-0" {
				t.Errorf("GPUs %+v, want GPU-0 read", keep(got))
			}
		})
	}
}

func TestGPUsFromSlicesGenericModel(t *testing.T) {
	s := nvSlice("s", "n", 1, nvDevice("gpu-0", "gpu", map[string]string{"productName": "NVIDIA X200"}, map[string]string{"memory": "81559Mi"}))
	got, err := dra.GPUsFromSlices("n", []resourcev1.ResourceSlice{s})
	if err != nil {
		t.Fatal(err)
	}
	m, err := devices.LookupModel(string(got[0].Model))
	if err != nil || !m.IsGeneric() || m.Memory != 81559 {
		t.Errorf("model %s (%v), want a generic 81559 MiB model", got[0].Model, err)
	}
}

func TestGPUsFromSlicesErrors(t *testing.T) {
	whole := func(name, uuid string) resourcev1.Device {
		return nvDevice(name, "gpu", map[string]string{"uuid": uuid, "productName": a100}, nil)
	}
	part := func(name, profile string) resourcev1.Device {
		return nvDevice(name, "mig", map[string]string{"parentUUID": "GPU-0", "productName": a100, "profile": profile}, nil)
	}
	cases := []struct {
		name   string
		slices []resourcev1.ResourceSlice
		want   []string
	}{
		{"duplicate name across slices", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, whole("gpu-0", "GPU-0")),
			nvSlice("s2", "n", 1, whole("gpu-0", "GPU-0"))}, []string{"ResourceSlice s2", "device gpu-0", "ResourceSlice s1", "unique"}},
		{"duplicate name in one slice", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, whole("gpu-0", "GPU-0"), whole("gpu-0", "GPU-0"))},
			[]string{"ResourceSlice s1", "device gpu-0"}},
		{"whole and MIG", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, whole("gpu-0", "GPU-0"), part("gpu-0-mig-7g40gb-0-0", "7g.40gb"))},
			[]string{"ResourceSlice s1", "device gpu-0-mig-7g40gb-0-0", "offered whole"}},
		{"UUID conflict", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, part("gpu-0-mig-1g5gb-19-0", "1g.5gb"),
			nvDevice("gpu-0-mig-1g5gb-19-1", "mig", map[string]string{"parentUUID": "GPU-9", "productName": a100, "profile": "1g.5gb"}, nil))},
			[]string{"device gpu-0-mig-1g5gb-19-1", `UUID "GPU-9"`}},
		{"profile the model lacks", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, part("gpu-0-mig-1g10gb-19-0", "1g.10gb+gfx"))},
			[]string{"device gpu-0-mig-1g10gb-19-0", `no MIG profile "1g.10gb+gfx"`}},
		{"no profile", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1,
			nvDevice("gpu-0-mig-1g5gb-19-0", "mig", map[string]string{"productName": a100}, nil))}, []string{"attribute profile: missing"}},
		{"overlapping instances", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, part("gpu-0-mig-4g20gb-5-0", "4g.20gb"),
			part("gpu-0-mig-3g20gb-9-0", "3g.20gb"))}, []string{"node n", "GPU 0", "overlaps"}},
		{"index disagrees with name", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1,
			nvDevice("gpu-1", "gpu", map[string]string{"productName": a100, "index": "int:2"}, nil))}, []string{"device gpu-1", "attribute index"}},
		{"attribute of the wrong type", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1,
			nvDevice("gpu-1", "gpu", map[string]string{"productName": a100, "uuid": "int:3"}, nil))}, []string{"device gpu-1", "attribute uuid: want a string"}},
		{"unknown gantry model", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1,
			nvDevice("gpu-1", "gpu", map[string]string{"gantry.dev/model": "Z1"}, nil))}, []string{"device gpu-1", "attribute gantry.dev/model"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dra.GPUsFromSlices("n", tc.slices)
			var ignored *dra.IgnoredDevicesError
			if err == nil || errors.As(err, &ignored) || got != nil {
				t.Fatalf("GPUs %v, error %v; want a hard error", keep(got), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
