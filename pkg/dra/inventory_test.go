package dra_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// gpus builds count GPUs of a catalog model shared as s, with UUIDs, NVLink domains of
// four and the usual two GPUs per PCIe switch.
func gpus(t *testing.T, model string, count int, s devices.Sharing) []devices.GPU {
	t.Helper()
	m, err := devices.LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	out, err := devices.NewGPUs(m, count, s, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i].UUID = fmt.Sprintf("GPU-%08d-0000-0000-0000-%012d", i, i)
	}
	return out
}

func mig(layout string, custom ...[]string) devices.Sharing {
	return devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: layout, CustomProfiles: custom}
}

// kept is what a round trip must keep of a GPU.
type kept struct {
	Index, NVLink, Switch int
	UUID                  string
	Model                 devices.ModelID
	Instances             []devices.Instance
	Healthy               bool
}

func keep(gs []devices.GPU) []kept {
	out := make([]kept, len(gs))
	for i, g := range gs {
		in := slices.Clone(g.Instances)
		sort.Slice(in, func(a, b int) bool { return in[a].Start < in[b].Start })
		out[i] = kept{g.Index, g.NVLinkDomain, g.PCIeSwitch, g.UUID, g.Model, in, g.Healthy}
	}
	return out
}

func TestInventoryRoundTrip(t *testing.T) {
	generic, err := devices.GenericModel("NVIDIA-X200", 81559)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		gpus  []devices.GPU
		kinds map[string]int // devices per type
	}{
		{"H100 whole", gpus(t, "H100", 8, devices.Sharing{}), map[string]int{"gpu": 8}},
		{"A100-40GB all-balanced", gpus(t, "A100-SXM4-40GB", 8, mig(devices.LayoutBalanced)), map[string]int{"mig": 32}},
		{"H100 all-1g.10gb", gpus(t, "H100", 2, mig("all-1g.10gb")), map[string]int{"mig": 14}},
		{"A30 with +me", gpus(t, "A30", 4, mig(devices.LayoutCustom, []string{"2g.12gb+me", "1g.6gb", "1g.6gb"})), map[string]int{"mig": 12}},
		{"RTX PRO 6000 +me and -me on one GPU", gpus(t, "RTX-PRO-6000", 2,
			mig(devices.LayoutCustom, []string{"1g.24gb+me.all", "1g.24gb-me", "2g.48gb-me"})), map[string]int{"mig": 6}},
		{"RTX PRO 6000 +gfx", gpus(t, "RTX-PRO-6000", 1, mig(devices.LayoutCustom, []string{"2g.48gb+gfx", "1g.24gb+gfx", "1g.24gb"})), map[string]int{"mig": 3}},
		{"B200 7g", gpus(t, "B200", 2, mig("all-7g.180gb")), map[string]int{"mig": 2}},
		{"generic model", []devices.GPU{{Index: 0, UUID: "GPU-x", Model: generic.ID, Healthy: true},
			{Index: 1, UUID: "GPU-y", Model: generic.ID, PCIeSwitch: 1, NVLinkDomain: 1, Healthy: true}}, map[string]int{"gpu": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := dra.NewNodeInventory("node-a", tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, d := range inv.Devices() {
				kinds[*d.Attributes[dra.AttrType].StringValue]++
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tc.kinds) {
				t.Errorf("device types %v, want %v", kinds, tc.kinds)
			}
			back, err := dra.GPUsFromSlices("node-a", inv.Slices())
			if err != nil {
				t.Fatal(err)
			}
			if got, want := keep(back), keep(tc.gpus); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, want)
			}
			// The GPUs read back build a node of the device model.
			if _, err := devices.NewNodeDevices(back); err != nil {
				t.Errorf("GPUs read back: %v", err)
			}
		})
	}
}

func TestDeviceNamesAreUniqueDNSLabels(t *testing.T) {
	for _, m := range devices.MIGModels() {
		seen := map[string]string{}
		for _, p := range m.MIG.Profiles {
			for _, start := range p.Starts {
				g := devices.GPU{Index: 7, Model: m.ID, Healthy: true}
				d := dra.DeviceFor(g, &devices.Instance{Profile: p.Name, Start: start})
				if errs := validation.IsDNS1123Label(d.Name); len(errs) > 0 {
					t.Errorf("%s %s@%d: name %q: %v", m.ID, p.Name, start, d.Name, errs)
				}
				key := fmt.Sprintf("%s@%d", p.Name, start)
				if other, dup := seen[d.Name]; dup {
					t.Errorf("%s: %s and %s are both named %s", m.ID, other, key, d.Name)
				}
				seen[d.Name] = key
			}
		}
	}
}

func TestDeviceNameAndID(t *testing.T) {
	gs := gpus(t, "H100", 4, mig(devices.LayoutCustom, []string{"3g.40gb", "1g.10gb+me", "1g.10gb"}))
	gs[0].Instances, gs[0].Sharing = nil, devices.Sharing{}
	gs[3].Healthy = false
	inv, err := dra.NewNodeInventory("n", gs)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		id, name string
		ok       bool
	}{
		{"GPU-0", "gpu-0", true},
		{"GPU-1/mig-3g.40gb@0", "gpu-1-mig-3g40gb-9-0", true},
		{"GPU-1/mig-1g.10gb+me@5", "gpu-1-mig-1g10gb-me-20-5", true},
		{"GPU-2/mig-1g.10gb@4", "gpu-2-mig-1g10gb-19-4", true},
		{"GPU-3/mig-3g.40gb@0", "gpu-3-mig-3g40gb-9-0", true}, // unhealthy: not published, still named
		{"GPU-1", "", false},                                  // MIG enabled: not offered whole
		{"GPU-0/replica-1", "", false},
		{"GPU-9", "", false},
	}
	for _, tc := range cases {
		name, ok := inv.DeviceName(tc.id)
		if name != tc.name || ok != tc.ok {
			t.Errorf("DeviceName(%q) = %q, %v; want %q, %v", tc.id, name, ok, tc.name, tc.ok)
		}
		if !tc.ok {
			continue
		}
		if id, ok := inv.DeviceID(tc.name); id != tc.id || !ok {
			t.Errorf("DeviceID(%q) = %q, %v; want %q", tc.name, id, ok, tc.id)
		}
	}
	if _, ok := inv.DeviceID("gpu-1"); ok {
		t.Error("DeviceID(gpu-1) found a device the inventory does not have")
	}
	for _, d := range inv.Devices() {
		if strings.HasPrefix(d.Name, "gpu-3") {
			t.Errorf("unhealthy GPU 3 publishes %s", d.Name)
		}
	}
}

func TestDeviceForAttributes(t *testing.T) {
	g := devices.GPU{Index: 2, UUID: "GPU-abc", Model: "H100-SXM5-80GB", NVLinkDomain: 1, PCIeSwitch: 1, Healthy: true}
	whole := dra.DeviceFor(g, nil)
	part := dra.DeviceFor(g, &devices.Instance{Profile: "2g.20gb", Start: 2})
	str := func(s string) string { return "s:" + s }
	num := func(i int64) string { return fmt.Sprintf("i:%d", i) }
	ver := func(v string) string { return "v:" + v }
	cases := []struct {
		dev  resourcev1.Device
		attr resourcev1.QualifiedName
		want string
	}{
		{whole, dra.AttrType, str("gpu")},
		{whole, dra.AttrUUID, str("GPU-abc")},
		{whole, dra.AttrIndex, num(2)},
		{whole, dra.AttrMinor, num(2)},
		{whole, dra.AttrProductName, str("NVIDIA H100-80GB-HBM3")},
		{whole, dra.AttrBrand, str("Nvidia")},
		{whole, dra.AttrArchitecture, str("Hopper")},
		{whole, dra.AttrCUDAComputeCapability, ver("9.0.0")},
		{whole, dra.AttrModel, str("H100-SXM5-80GB")},
		{whole, dra.AttrNVLinkDomain, num(1)},
		{whole, dra.AttrPCIeSwitch, num(1)},
		{whole, dra.AttrPCIeRoot, str("pci0000:01")},
		{part, dra.AttrType, str("mig")},
		{part, dra.AttrProfile, str("2g.20gb")},
		{part, dra.AttrParentUUID, str("GPU-abc")},
		{part, dra.AttrParentIndex, num(2)},
		{part, dra.AttrArchitecture, str("Hopper")},
	}
	for _, tc := range cases {
		a, ok := tc.dev.Attributes[tc.attr]
		got := "missing"
		switch {
		case !ok:
		case a.StringValue != nil:
			got = str(*a.StringValue)
		case a.IntValue != nil:
			got = num(*a.IntValue)
		case a.VersionValue != nil:
			got = ver(*a.VersionValue)
		}
		if got != tc.want {
			t.Errorf("%s %s = %s, want %s", tc.dev.Name, tc.attr, got, tc.want)
		}
	}
	for _, absent := range []resourcev1.QualifiedName{dra.AttrUUID, dra.AttrDriverVersion} {
		if _, ok := part.Attributes[absent]; ok {
			t.Errorf("MIG device has %s without host facts", absent)
		}
	}
	wantCaps := map[resourcev1.QualifiedName]string{"memory": "80Gi"}
	checkCapacity(t, whole, wantCaps)
	checkCapacity(t, part, map[resourcev1.QualifiedName]string{"memory": "20096Mi", "memorySlice2": "1", "memorySlice3": "1"})
}

func checkCapacity(t *testing.T, d resourcev1.Device, want map[resourcev1.QualifiedName]string) {
	t.Helper()
	got := map[resourcev1.QualifiedName]string{}
	for k, v := range d.Capacity {
		got[k] = v.Value.String()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s capacity %v, want %v", d.Name, got, want)
	}
}

func TestAttributeNamesAreValid(t *testing.T) {
	g := devices.GPU{Index: 0, UUID: "GPU-a", Model: "A100-SXM4-40GB", Healthy: true}
	for _, d := range []resourcev1.Device{dra.DeviceFor(g, nil), dra.DeviceFor(g, &devices.Instance{Profile: "7g.40gb"})} {
		for name := range d.Attributes {
			checkQualifiedName(t, string(name))
		}
		for name := range d.Capacity {
			checkQualifiedName(t, string(name))
		}
	}
}

// checkQualifiedName applies the resource.k8s.io rule: an optional DNS subdomain and
// "/", then a C identifier of at most 32 characters.
func checkQualifiedName(t *testing.T, name string) {
	t.Helper()
	id := name
	if domain, rest, ok := strings.Cut(name, "/"); ok {
		id = rest
		if errs := validation.IsDNS1123Subdomain(domain); len(errs) > 0 {
			t.Errorf("attribute %s: domain: %v", name, errs)
		}
	}
	if errs := validation.IsCIdentifier(id); len(errs) > 0 || len(id) > resourcev1.DeviceMaxIDLength {
		t.Errorf("attribute %s: %v (at most %d characters)", name, errs, resourcev1.DeviceMaxIDLength)
	}
}

func TestHostFacts(t *testing.T) {
	gs := gpus(t, "A100-SXM4-40GB", 2, mig("all-7g.40gb"))
	in := devices.Instance{Profile: "7g.40gb", Start: 0}
	facts := dra.HostFacts{DriverVersion: "535.129.03", CUDADriverVersion: "12.2",
		GPUs: map[int]dra.GPUFacts{1: {ProductName: "NVIDIA A100-SXM4-40GB", PCIBusID: "0000:3b:00.0", PCIeRoot: "pci0000:3a",
			MIGUUIDs: map[devices.Instance]string{in: "MIG-1234"}}}}
	inv, err := dra.NewNodeInventory("n", gs, dra.WithHostFacts(facts))
	if err != nil {
		t.Fatal(err)
	}
	d := inv.Devices()[1]
	want := map[resourcev1.QualifiedName]string{
		dra.AttrDriverVersion: "535.129.3", dra.AttrCUDADriverVersion: "12.2.0", dra.AttrUUID: "MIG-1234",
		dra.AttrPCIeBusID: "0000:3b:00.0", dra.AttrPCIeRoot: "pci0000:3a",
	}
	for name, v := range want {
		a := d.Attributes[name]
		got := ""
		if a.StringValue != nil {
			got = *a.StringValue
		} else if a.VersionValue != nil {
			got = *a.VersionValue
		}
		if got != v {
			t.Errorf("%s %s = %q, want %q", d.Name, name, got, v)
		}
	}
	if _, ok := inv.Devices()[0].Attributes[dra.AttrUUID]; ok {
		t.Error("GPU 0's MIG device has a UUID no fact gave")
	}
	for _, bad := range []string{"535.x", "1.2.3.4", "-1"} {
		if _, err := dra.NewNodeInventory("n", gs, dra.WithHostFacts(dra.HostFacts{DriverVersion: bad})); err == nil ||
			!strings.Contains(err.Error(), "driver version") {
			t.Errorf("driver version %q: error %v, want one about the driver version", bad, err)
		}
	}
}

func TestNewNodeInventoryRefuses(t *testing.T) {
	cases := []struct {
		name string
		gpus []devices.GPU
		want string
	}{
		{"unknown model", []devices.GPU{{Index: 0, Model: "X9000", Healthy: true}}, `unknown GPU model "X9000"`},
		{"bad layout", []devices.GPU{{Index: 0, Model: "H100-SXM5-80GB", Healthy: true,
			Instances: []devices.Instance{{Profile: "4g.40gb", Start: 0}, {Profile: "3g.40gb", Start: 0}}}}, "overlaps"},
		{"duplicate index", []devices.GPU{{Index: 1, Model: "L4", Healthy: true}, {Index: 1, Model: "L4", Healthy: true}}, "device name gpu-1"},
	}
	for _, tc := range cases {
		_, err := dra.NewNodeInventory("node-x", tc.gpus)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "node node-x") {
			t.Errorf("%s: error %v, want one naming node-x and saying %q", tc.name, err, tc.want)
		}
	}
}

func TestSlicesSplitLargePools(t *testing.T) {
	gs := gpus(t, "H100", 20, mig("all-1g.10gb")) // 140 devices
	inv, err := dra.NewNodeInventory("big", gs)
	if err != nil {
		t.Fatal(err)
	}
	ss := inv.Slices()
	if len(ss) != 2 || len(ss[0].Spec.Devices) != resourcev1.ResourceSliceMaxDevices || len(ss[1].Spec.Devices) != 12 {
		t.Fatalf("slices: %d, want 2 of 128 and 12 devices", len(ss))
	}
	for _, s := range ss {
		if s.Spec.Pool.ResourceSliceCount != 2 || s.Spec.Pool.Name != "big" || *s.Spec.NodeName != "big" || s.Spec.Driver != dra.DriverName {
			t.Errorf("slice %s: pool %+v node %v driver %s", s.Name, s.Spec.Pool, *s.Spec.NodeName, s.Spec.Driver)
		}
	}
	back, err := dra.GPUsFromSlices("big", ss)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(keep(back)) != fmt.Sprint(keep(gs)) {
		t.Error("a pool of two slices does not read back")
	}
}

// quantity is a capacity of v.
func quantity(v string) resourcev1.DeviceCapacity {
	return resourcev1.DeviceCapacity{Value: resource.MustParse(v)}
}
