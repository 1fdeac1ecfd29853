package dra_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	"pgregory.net/rapid"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// fataler is what the helpers need of *testing.T and *rapid.T alike.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// dynamicGPUs are count GPUs of model with the MIG layout chosen at allocation time.
func dynamicGPUs(t fataler, model string, count int) []devices.GPU {
	t.Helper()
	m, err := devices.LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := devices.NewGPUs(m, count, dra.PartitionSharing(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return gpus
}

// migClaim is a pod's claim template for one MIG instance of profile.
func migClaim(profile string) dra.ClaimSpec {
	return podClaim("mig", reqExact("mig", dra.ClassMIG, 1, fmt.Sprintf(`device.attributes["gpu.nvidia.com"].profile == %q`, profile)))
}

// TestPartitionableGPUTakesWhatClaimsAskFor is the point of partitionable devices: three
// pending pods asking through claims for a 3g.20gb and two 2g.10gb all get one
// A100-40GB, its layout chosen for them, where mig-parted's all-balanced layout (two
// 1g.5gb, a 2g.10gb and a 3g.20gb) holds only two of them. The allocations name the
// placement devices, and kube-scheduler's allocator, counting the published counters,
// accepts each pod's claim on top of the ones before.
func TestPartitionableGPUTakesWhatClaimsAskFor(t *testing.T) {
	classList := nvClasses()
	classes := mustClasses(t, classList, nil)
	pods := []string{"3g.20gb", "2g.10gb", "2g.10gb"}
	wantDevices := []string{"gpu-0-mig-3g20gb-9-4", "gpu-0-mig-2g10gb-14-0", "gpu-0-mig-2g10gb-14-2"}

	gpus := dynamicGPUs(t, "A100", 1)
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := dra.NewNodeInventory("n1", gpus)
	if err != nil {
		t.Fatal(err)
	}
	var allocated []string
	for i, profile := range pods {
		claim := migClaim(profile)
		if !upstreamAllocatesPartitioned(t, inv, classList, []dra.ClaimSpec{claim}, allocated) {
			t.Fatalf("pod %d (%s): kube-scheduler's allocator finds no device", i, profile)
		}
		pc := mustCompile(t, classes, claim)
		a, ref := nd.Fit(pc.Request())
		if ref != nil {
			t.Fatalf("pod %d (%s): %v", i, profile, ref)
		}
		if err := nd.Commit(a); err != nil {
			t.Fatal(err)
		}
		res, err := pc.Results(inv, a)
		if err != nil {
			t.Fatal(err)
		}
		got := res[0].Allocation.Devices.Results
		if len(got) != 1 || got[0].Device != wantDevices[i] || got[0].Pool != "n1" || got[0].Request != "mig" {
			t.Fatalf("pod %d (%s): allocated %+v, want %s", i, profile, got, wantDevices[i])
		}
		allocated = append(allocated, got[0].Device)
	}
	if got := fmt.Sprint(nd.Carved(0)); got != "[2g.10gb@0 2g.10gb@2 3g.20gb@4]" {
		t.Errorf("carved %s", got)
	}
	if upstreamAllocatesPartitioned(t, inv, classList, []dra.ClaimSpec{migClaim("1g.5gb")}, allocated) {
		t.Error("kube-scheduler's allocator finds room for a 1g.5gb on the full GPU")
	}

	// The same pods on a fixed all-balanced A100: the second 2g.10gb has nowhere to go.
	fixed, err := devices.NewNodeDevices(mustGPUs(t, "A100", 1, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutBalanced}))
	if err != nil {
		t.Fatal(err)
	}
	for i, profile := range pods {
		pc := mustCompile(t, classes, migClaim(profile))
		a, ref := fixed.Fit(pc.Request())
		if i < 2 {
			if ref != nil {
				t.Fatalf("all-balanced pod %d (%s): %v", i, profile, ref)
			}
			if err := fixed.Commit(a); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if ref == nil {
			t.Fatalf("all-balanced holds a second 2g.10gb: %v", a)
		}
		if why := pc.Explain(fixed); why == nil || why.Reason != dra.ReasonNotEnough || why.Claim != "mig" {
			t.Errorf("all-balanced refusal %+v, want %s for claim mig", why, dra.ReasonNotEnough)
		}
	}
}

func mustGPUs(t testing.TB, model string, count int, s devices.Sharing) []devices.GPU {
	t.Helper()
	m, err := devices.LookupModel(model)
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := devices.NewGPUs(m, count, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return gpus
}

// A whole-GPU claim takes a partitionable GPU only while nothing is carved on it, and
// its allocation names the GPU device, which draws every counter.
func TestPartitionableWholeGPUClaim(t *testing.T) {
	classes := mustClasses(t, nvClasses(), nil)
	gpus := dynamicGPUs(t, "H100", 2)
	nd, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := dra.NewNodeInventory("n1", gpus)
	if err != nil {
		t.Fatal(err)
	}
	mig := mustCompile(t, classes, migClaim("1g.10gb"))
	commit(t, nd, mig.Request())
	whole := mustCompile(t, classes, podClaim("gpu", reqExact("gpu", dra.ClassGPU, 1)))
	a := commit(t, nd, whole.Request())
	res, err := whole.Results(inv, a)
	if err != nil {
		t.Fatal(err)
	}
	if got := res[0].Allocation.Devices.Results[0].Device; got != "gpu-1" {
		t.Errorf("whole GPU %s, want gpu-1 (gpu-0 has an instance carved)", got)
	}
	if _, ref := nd.Fit(whole.Request()); ref == nil {
		t.Error("a second whole GPU fits")
	}
	two := mustCompile(t, classes, podClaim("gpu", reqExact("gpu", dra.ClassGPU, 2)))
	if why := two.Explain(nd); why == nil || why.Reason != dra.ReasonNotEnough {
		t.Errorf("two whole GPUs: refusal %+v, want %s", why, dra.ReasonNotEnough)
	}
}

// A node of partitionable GPUs publishes slices within the v1 limits, every device
// beside the counter set it draws on, each device once.
func TestPartitionSlicesKeepLimits(t *testing.T) {
	tests := []struct {
		name string
		gpus []devices.GPU
	}{
		{"8 dynamic A100", dynamicGPUs(t, "A100", 8)},
		{"4 dynamic RTX PRO 6000", dynamicGPUs(t, "RTX-PRO-6000", 4)},
		{"fixed and dynamic", append(mustGPUs(t, "H100", 2, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutBalanced}),
			renumber(dynamicGPUs(t, "H100", 3), 2)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := dra.NewNodeInventory("n1", tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			slices := inv.Slices()
			seen := map[string]bool{}
			for _, s := range slices {
				checkSliceLimits(t, &s, len(slices))
				for _, d := range s.Spec.Devices {
					if seen[d.Name] {
						t.Errorf("device %s published twice", d.Name)
					}
					seen[d.Name] = true
				}
			}
			if len(seen) != len(inv.Devices()) {
				t.Errorf("slices publish %d devices, the inventory has %d", len(seen), len(inv.Devices()))
			}
		})
	}
}

func renumber(gpus []devices.GPU, from int) []devices.GPU {
	for i := range gpus {
		gpus[i].Index = from + i
	}
	return gpus
}

// checkSliceLimits checks one slice of a pool of n against resource.k8s.io/v1's limits
// and that its devices draw only on its own counter sets, within their counters.
func checkSliceLimits(t *testing.T, s *resourcev1.ResourceSlice, n int) {
	t.Helper()
	counters, consumption := 0, 0
	sets := map[string]resourcev1.CounterSet{}
	for _, cs := range s.Spec.SharedCounters {
		counters += len(cs.Counters)
		sets[cs.Name] = cs
	}
	for _, d := range s.Spec.Devices {
		for _, cc := range d.ConsumesCounters {
			consumption += len(cc.Counters)
			set, ok := sets[cc.CounterSet]
			if !ok {
				t.Errorf("slice %s: device %s draws on %s, not in the slice", s.Name, d.Name, cc.CounterSet)
				continue
			}
			for name, c := range cc.Counters {
				if have, ok := set.Counters[name]; !ok || c.Value.Cmp(have.Value) > 0 {
					t.Errorf("slice %s: device %s takes %s of %s, the set has %v", s.Name, d.Name, c.Value.String(), name, have.Value.String())
				}
			}
		}
	}
	if len(s.Spec.Devices) > resourcev1.ResourceSliceMaxDevices || counters > resourcev1.ResourceSliceMaxSharedCounters ||
		consumption > resourcev1.ResourceSliceMaxDeviceCountersPerSlice || s.Spec.Pool.ResourceSliceCount != int64(n) {
		t.Errorf("slice %s: %d devices, %d counters, %d consumptions, count %d of %d", s.Name, len(s.Spec.Devices), counters, consumption, s.Spec.Pool.ResourceSliceCount, n)
	}
}

// upstreamAllocatesPartitioned runs kube-scheduler's allocator, partitionable devices on,
// on the node's slices with the named devices allocated already.
func upstreamAllocatesPartitioned(t fataler, inv *dra.NodeInventory, classList []resourcev1.DeviceClass, claims []dra.ClaimSpec, allocated []string) bool {
	t.Helper()
	res, err := runUpstream(context.Background(), t, inv, classList, claims, allocated, structured.Features{PartitionableDevices: true})
	if err != nil {
		t.Fatalf("upstream: %v", err)
	}
	return res != nil
}

// partitionShapes are the partitionable nodes the property runs on: the 8-slice
// geometry, the A30's +me profiles, the RTX PRO 6000's +me.all and -me ones.
var partitionShapes = []struct {
	model    string
	profiles []string
}{
	{"A100", []string{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}},
	{"A30", []string{"1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"}},
	{"RTX-PRO-6000", []string{"1g.24gb", "1g.24gb-me", "1g.24gb+me.all", "2g.48gb", "2g.48gb+me.all", "2g.48gb-me", "4g.96gb"}},
}

// TestPropPartitionAgreesWithUpstream: pods asking one after the other for a MIG
// instance or a whole GPU of a partitionable node fit in Gantry exactly when
// kube-scheduler's allocator, counting the published counters, finds a device, and
// what Gantry carves is always what the counters allow.
func TestPropPartitionAgreesWithUpstream(t *testing.T) {
	classList := nvClasses()
	classes := mustClasses(t, classList, nil)
	rapid.Check(t, func(rt *rapid.T) {
		shape := rapid.SampledFrom(partitionShapes).Draw(rt, "shape")
		gpus := dynamicGPUs(rt, shape.model, rapid.IntRange(1, 2).Draw(rt, "gpus"))
		nd, err := devices.NewNodeDevices(gpus)
		if err != nil {
			rt.Fatal(err)
		}
		inv, err := dra.NewNodeInventory("n1", gpus)
		if err != nil {
			rt.Fatal(err)
		}
		var allocated []string
		for step := range rapid.IntRange(1, 12).Draw(rt, "pods") {
			claim := podClaim("gpu", reqExact("gpu", dra.ClassGPU, 1))
			if p := rapid.IntRange(-1, len(shape.profiles)-1).Draw(rt, fmt.Sprint("profile", step)); p >= 0 {
				claim = migClaim(shape.profiles[p])
			}
			pc, err := classes.Compile([]dra.ClaimSpec{claim})
			if err != nil {
				rt.Fatal(err)
			}
			a, ref := nd.Fit(pc.Request())
			if up := upstreamAllocatesPartitioned(rt, inv, classList, []dra.ClaimSpec{claim}, allocated); up != (ref == nil) {
				rt.Fatalf("pod %d %s: Gantry fits %v (%v), upstream %v; held %v", step, claimText(claim), ref == nil, ref, up, allocated)
			}
			if ref != nil {
				continue
			}
			if err := nd.Commit(a); err != nil {
				rt.Fatalf("commit %s: %v", a, err)
			}
			res, err := pc.Results(inv, a)
			if err != nil {
				rt.Fatal(err)
			}
			for _, r := range res[0].Allocation.Devices.Results {
				allocated = append(allocated, r.Device)
			}
		}
	})
}

func claimText(c dra.ClaimSpec) string {
	var parts []string
	for _, r := range c.Spec.Devices.Requests {
		parts = append(parts, r.Exactly.DeviceClassName)
		for _, s := range r.Exactly.Selectors {
			parts = append(parts, s.CEL.Expression)
		}
	}
	return strings.Join(parts, " ")
}

// A node dump with partitionable slices replays as the node it came from: each dynamic
// GPU comes back with its layout chosen at allocation time and no instances (its
// placement devices are options, not instances, and are not reported as ignored),
// beside the node's fixed GPUs as they were.
func TestPartitionableRoundTrip(t *testing.T) {
	balanced := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutBalanced}
	tests := []struct {
		name string
		gpus []devices.GPU
	}{
		{"8 dynamic A100", dynamicGPUs(t, "A100", 8)},
		{"dynamic RTX PRO 6000", dynamicGPUs(t, "RTX-PRO-6000", 2)},
		{"fixed, whole and dynamic", append(append(mustGPUs(t, "H100", 2, balanced),
			renumber(mustGPUs(t, "H100", 1, devices.Sharing{}), 2)...), renumber(dynamicGPUs(t, "H100", 3), 3)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := dra.NewNodeInventory("n1", tc.gpus)
			if err != nil {
				t.Fatal(err)
			}
			back, err := dra.GPUsFromSlices("n1", inv.Slices())
			if err != nil {
				t.Fatalf("read back: %v", err)
			}
			if len(back) != len(tc.gpus) {
				t.Fatalf("read back %d GPUs, want %d", len(back), len(tc.gpus))
			}
			for i, g := range back {
				want := tc.gpus[i]
				if g.Sharing.DynamicMIG() != want.Sharing.DynamicMIG() || fmt.Sprint(g.Instances) != fmt.Sprint(want.Instances) ||
					g.Model != want.Model || g.Index != want.Index {
					t.Errorf("GPU %d: read back %s %v %+v, want %s %v %+v", i, g.Model, g.Instances, g.Sharing, want.Model, want.Instances, want.Sharing)
				}
				if want.Sharing.DynamicMIG() && !reflect.DeepEqual(g.Sharing, dra.PartitionSharing()) {
					t.Errorf("GPU %d: sharing %+v, want %+v", i, g.Sharing, dra.PartitionSharing())
				}
			}
			// The replayed node publishes what the original did.
			again, err := dra.NewNodeInventory("n1", back)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := deviceNames(again.Slices()), deviceNames(inv.Slices()); got != want {
				t.Errorf("replayed node publishes\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func deviceNames(slices []resourcev1.ResourceSlice) string {
	var parts []string
	for _, s := range slices {
		var sets []string
		for _, cs := range s.Spec.SharedCounters {
			sets = append(sets, cs.Name)
		}
		names := make([]string, len(s.Spec.Devices))
		for i, d := range s.Spec.Devices {
			names[i] = d.Name
		}
		parts = append(parts, fmt.Sprintf("%s %v %v", s.Name, sets, names))
	}
	return strings.Join(parts, "\n")
}

// Slices as NVIDIA's driver publishes dynamic MIG (no gantry.dev attributes): the GPU
// whole and its placements, all drawing on one counter set, read as one partitionable
// GPU, with nothing ignored. A GPU that both draws on counters and has fixed MIG
// devices is an error naming the device.
func TestGPUsFromPartitionableNVIDIASlices(t *testing.T) {
	counters := func(d resourcev1.Device) resourcev1.Device {
		d.ConsumesCounters = []resourcev1.DeviceCounterConsumption{{CounterSet: "gpu-0-counter-set"}}
		return d
	}
	whole := counters(nvDevice("gpu-0", "gpu", map[string]string{"uuid": "GPU-0", "productName": a100}, nil))
	placement := counters(nvDevice("gpu-0-mig-1g5gb-19-3", "mig", map[string]string{"productName": a100, "profile": "1g.5gb", "parentUUID": "GPU-0"}, nil))
	fixed := nvDevice("gpu-0-mig-3g20gb-9-4", "mig", map[string]string{"productName": a100, "profile": "3g.20gb", "parentUUID": "GPU-0"}, nil)
	other := nvDevice("gpu-1", "gpu", map[string]string{"uuid": "GPU-1", "productName": a100}, nil)

	for _, order := range [][]resourcev1.Device{{whole, placement, other}, {placement, whole, other}, {placement, other}} {
		got, err := dra.GPUsFromSlices("n", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, order...)})
		if err != nil {
			t.Fatalf("%d devices: %v", len(order), err)
		}
		if len(got) != 2 || !reflect.DeepEqual(got[0].Sharing, dra.PartitionSharing()) || len(got[0].Instances) != 0 ||
			got[1].Sharing.DynamicMIG() || got[0].UUID != "GPU-0" {
			t.Errorf("%d devices: GPUs %+v, want GPU-0 partitionable and GPU-1 whole", len(order), got)
		}
	}
	for _, mixed := range [][]resourcev1.Device{{whole, fixed}, {fixed, placement}} {
		_, err := dra.GPUsFromSlices("n", []resourcev1.ResourceSlice{nvSlice("s1", "n", 1, mixed...)})
		if err == nil || !strings.Contains(err.Error(), "ResourceSlice s1") || !strings.Contains(err.Error(), "GPU 0") {
			t.Errorf("%s then %s: error %v, want one naming the slice and GPU 0", mixed[0].Name, mixed[1].Name, err)
		}
	}
}
