package devices_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// propNodes are the node shapes the allocation properties run on: every sharing mode.
var propNodeShapes = []func() *gt.DevicesWrapper{
	func() *gt.DevicesWrapper { return gt.MakeDevices("H100", 8).NVLink(4) },
	func() *gt.DevicesWrapper { return gt.MakeDevices("A100", 4).MIG(devices.MIGMixed, "all-balanced") },
	func() *gt.DevicesWrapper { return gt.MakeDevices("H100", 2).MIG(devices.MIGSingle, "all-1g.10gb") },
	func() *gt.DevicesWrapper { return gt.MakeDevices("T4", 2).TimeSlicing(4, true) },
	func() *gt.DevicesWrapper { return gt.MakeDevices("A100", 2).MPS(3, 0) },
	func() *gt.DevicesWrapper { return gt.MakeDevices("V100", 4).Fractional() },
	// Per-resource sharing: a subset of the GPUs replicated (renamed or not, by index or
	// count), beside whole GPUs under the same or another name.
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("T4", 4).TimeSlicing(0, false).Replicate(gt.Replicated(resources.NvidiaGPU, 3, "1", "2"))
	},
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("A100", 3).MPS(0, 0).Replicate(devices.ReplicatedResource{Name: resources.NvidiaGPU, Rename: resources.NvidiaGPUShared, Replicas: 2, DeviceCount: 2})
	},
	// Time-sliced MIG: every 1g.5gb device, some 2g.10gb devices renamed, MIG single.
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("A100", 3).MIG(devices.MIGMixed, "all-balanced").Replicate(gt.Replicated("nvidia.com/mig-1g.5gb", 3),
			devices.ReplicatedResource{Name: "nvidia.com/mig-2g.10gb", Rename: "nvidia.com/mig-2g.10gb.shared", Replicas: 2, Devices: []string{"0:0", "2:0"}})
	},
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("A100", 2).MIG(devices.MIGSingle, "all-2g.10gb").Replicate(devices.ReplicatedResource{Name: resources.NvidiaGPU, Replicas: 2, DeviceCount: 4})
	},
	// Dynamic MIG layouts, carved by filtered (DRA) requests: the 8-slice geometry, the
	// A30's +me profiles and the RTX PRO 6000's +me.all and -me ones.
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("A100", 3).MIG(devices.MIGMixed, devices.LayoutDynamic)
	},
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("A30", 2).MIG(devices.MIGMixed, devices.LayoutDynamic)
	},
	func() *gt.DevicesWrapper {
		return gt.MakeDevices("RTX-PRO-6000", 2).MIG(devices.MIGMixed, devices.LayoutDynamic)
	},
}

// propProfiles are the MIG profiles the properties ask for: the A100-40GB's, the
// A30's and the RTX PRO 6000's, with their media variants.
var propProfiles = []string{"1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb",
	"1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb",
	"1g.24gb", "1g.24gb-me", "1g.24gb+me.all", "2g.48gb", "2g.48gb-me", "2g.48gb+me.all", "4g.96gb"}

// drawRequest draws a request of any kind; many will not fit the node, which is fine.
// Filtered requests (as DRA claims make them) take whole GPUs or MIG instances,
// dynamic GPUs included.
func drawRequest(t *rapid.T) devices.Request {
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 4:
		return devices.Request{Units: int64(rapid.IntRange(1, 3).Draw(t, "units")), Filter: firstOf{key: "all"}}
	case 5:
		return drawFilteredMIG(t)
	case 0:
		return devices.Request{Units: int64(rapid.IntRange(1, 6).Draw(t, "units"))}
	case 1:
		return devices.Request{Shared: int64(rapid.IntRange(1, 3).Draw(t, "shared"))}
	case 2:
		p := rapid.SampledFrom([]string{"1g.5gb", "2g.10gb", "3g.20gb"}).Draw(t, "profile")
		return devices.Request{MIG: []devices.MIGCount{{Profile: p, Count: int64(rapid.IntRange(1, 4).Draw(t, "count")), Shared: rapid.Bool().Draw(t, "shared")}}}
	}
	return devices.Request{
		Milli:  resources.MilliGPU(rapid.IntRange(0, 999).Draw(t, "milli")),
		Memory: resources.MiB(rapid.IntRange(0, 8192).Draw(t, "memory")),
	}
}

// drawFilteredMIG draws a filtered request for instances of one or two profiles.
func drawFilteredMIG(t *rapid.T) devices.Request {
	per := map[string]int{}
	var r devices.Request
	for i := range rapid.IntRange(1, 2).Draw(t, "profiles") {
		p := rapid.SampledFrom(propProfiles).Draw(t, fmt.Sprint("profile", i))
		if per[p] > 0 {
			continue
		}
		n := rapid.IntRange(1, 3).Draw(t, fmt.Sprint("count", i))
		per[p] = n
		r.MIG = append(r.MIG, devices.MIGCount{Profile: p, Count: int64(n)})
	}
	slices.SortFunc(r.MIG, func(a, b devices.MIGCount) int { return strings.Compare(a.Profile, b.Profile) })
	r.Filter = firstOf{key: "all", perProfile: per}
	return r
}

// Property: a random sequence of Fit/Commit/Release (including double commits and
// stray releases) never hands a device, MIG slice or replica out twice, never goes
// negative, and keeps capacity = free + held in the common unit.
func TestPropNoDoubleBooking(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom(propNodeShapes).Draw(t, "shape")().Obj()
		var held []devices.Assignment
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, fmt.Sprint("op", step)) {
			case 0, 1:
				if a, ref := n.Fit(drawRequest(t)); ref == nil && !a.IsZero() {
					if err := n.Commit(a); err != nil {
						t.Fatalf("commit of a fitted %v: %v", a, err)
					}
					held = append(held, a)
				}
			case 2:
				if len(held) > 0 {
					before := devices.DumpState(n)
					if !hasShare(held[0]) && n.Commit(held[0]) == nil {
						t.Fatalf("double commit of %v accepted", held[0])
					}
					if devices.DumpState(n) != before {
						t.Fatalf("failed commit changed the node")
					}
				}
			case 3:
				if len(held) > 0 {
					i := rapid.IntRange(0, len(held)-1).Draw(t, "victim")
					if err := n.Release(held[i]); err != nil {
						t.Fatalf("release of held %v: %v", held[i], err)
					}
					before := devices.DumpState(n)
					if !hasShare(held[i]) && n.Release(held[i]) == nil {
						t.Fatalf("second release of %v accepted", held[i])
					}
					if devices.DumpState(n) != before {
						t.Fatalf("failed release changed the node")
					}
					held = slices.Delete(held, i, i+1)
				}
			}
			checkInvariants(t, n, held)
		}
	})
}

// hasShare: identical shares on one GPU are interchangeable, so a second commit or
// release of a share is legal while room or another identical share remains.
func hasShare(a devices.Assignment) bool {
	return slices.ContainsFunc(a.Devices, func(d devices.Device) bool { return d.Kind == devices.ShareDevice })
}

func checkInvariants(t *rapid.T, n *devices.NodeDevices, held []devices.Assignment) {
	ids := map[string]bool{}
	shareMilli := map[int]resources.MilliGPU{}
	whole := map[int]bool{}
	var heldMilli resources.MilliGPU
	for _, a := range held {
		heldMilli += a.MilliGPU()
		for _, d := range a.Devices {
			if d.Kind == devices.ShareDevice {
				shareMilli[d.GPU] += d.Milli
				continue
			}
			if ids[d.ID()] {
				t.Fatalf("device %s handed out twice", d.ID())
			}
			ids[d.ID()] = true
			if d.Kind == devices.WholeGPU {
				whole[d.GPU] = true
			}
		}
	}
	for gpu, m := range shareMilli {
		if m > resources.MilliPerGPU || whole[gpu] {
			t.Fatalf("GPU-%d oversubscribed: %dm in shares, whole=%v", gpu, m, whole[gpu])
		}
	}
	checkHeldLayouts(t, n, held, whole)
	free, capacity := n.Free(), n.Capacity()
	for name, a := range free {
		if a < 0 || a > capacity[name] {
			t.Fatalf("free %s = %d out of [0, %d]", name, a, capacity[name])
		}
	}
	if got := resources.MilliGPU(free[resources.GPUMilli]) + heldMilli; got != resources.MilliGPU(capacity[resources.GPUMilli]) {
		t.Fatalf("free %d + held %d != capacity %d", free[resources.GPUMilli], heldMilli, capacity[resources.GPUMilli])
	}
	if err := devices.FreeViewMismatch(n); err != nil {
		t.Fatal(err)
	}
}

// Property: after any history, committing a fitted assignment and releasing it again
// restores exactly the state before.
func TestPropReleaseRestores(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom(propNodeShapes).Draw(t, "shape")().Obj()
		for range rapid.IntRange(0, 10).Draw(t, "history") {
			if a, ref := n.Fit(drawRequest(t)); ref == nil {
				_ = n.Commit(a) // a fitted assignment always commits; the other test checks it
			}
		}
		a, ref := n.Fit(drawRequest(t))
		if ref != nil || a.IsZero() {
			return
		}
		before, beforeFree := devices.DumpState(n), n.Free()
		if err := n.Commit(a); err != nil {
			t.Fatal(err)
		}
		if err := n.Release(a); err != nil {
			t.Fatal(err)
		}
		if devices.DumpState(n) != before || !sameVector(n.Free(), beforeFree) {
			t.Fatalf("release did not restore: %s vs %s", devices.DumpState(n), before)
		}
	})
}

// Property: Clone is independent of the original.
func TestPropCloneIsIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.SampledFrom(propNodeShapes).Draw(t, "shape")().Obj()
		c := n.Clone()
		before := devices.DumpState(n)
		if a, ref := c.Fit(drawRequest(t)); ref == nil {
			if err := c.Commit(a); err != nil {
				t.Fatal(err)
			}
		}
		if devices.DumpState(n) != before {
			t.Fatal("committing on a clone changed the original")
		}
	})
}

// bruteValid checks a layout against the placement rules with bit masks, written apart
// from ValidateLayout so the two can be compared.
func bruteValid(m devices.Model, l []devices.Instance) bool {
	var mask uint32
	compute, media, allMedia, withMedia := 0, 0, 0, 0
	count := map[string]int{}
	for _, in := range l {
		p, ok := m.Profile(in.Profile)
		if !ok || !slices.Contains(p.Starts, in.Start) || in.Start+p.MemorySlices > m.MIG.MemorySlices {
			return false
		}
		bits := uint32(1)<<p.MemorySlices - 1
		bits <<= in.Start
		if mask&bits != 0 {
			return false
		}
		mask |= bits
		compute += p.ComputeSlices
		count[p.Name]++
		if count[p.Name] > p.MaxCount {
			return false
		}
		if p.MediaExtensions {
			media++
		}
		if p.AllMedia {
			allMedia++
		}
		if !p.NoMedia {
			withMedia++
		}
	}
	// A +me.all instance takes every media engine: the rest must be -me instances.
	return compute <= m.MIG.ComputeSlices && media <= 1 && (allMedia == 0 || withMedia == 1)
}

// bruteExists enumerates every start assignment of the profiles.
func bruteExists(m devices.Model, profiles []string, placed []devices.Instance) bool {
	if len(profiles) == 0 {
		return bruteValid(m, placed)
	}
	for s := range m.MIG.MemorySlices {
		if bruteExists(m, profiles[1:], append(placed, devices.Instance{Profile: profiles[0], Start: s})) {
			return true
		}
	}
	return false
}

// Property: ValidateLayout accepts exactly the layouts the brute-force rules accept.
func TestPropValidateLayoutMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.SampledFrom(devices.MIGModels()).Draw(t, "model")
		var l []devices.Instance
		for i := range rapid.IntRange(0, 7).Draw(t, "n") {
			p := rapid.SampledFrom(m.MIG.Profiles).Draw(t, fmt.Sprint("p", i))
			// Mostly legal starts, so that valid layouts are common too.
			start := rapid.SampledFrom(p.Starts).Draw(t, fmt.Sprint("s", i))
			if rapid.IntRange(0, 4).Draw(t, fmt.Sprint("any", i)) == 0 {
				start = rapid.IntRange(0, m.MIG.MemorySlices-1).Draw(t, fmt.Sprint("raw", i))
			}
			l = append(l, devices.Instance{Profile: p.Name, Start: start})
		}
		want := bruteValid(m, l)
		if err := m.ValidateLayout(l); (err == nil) != want {
			t.Fatalf("%s %v: ValidateLayout err=%v, brute force valid=%v", m.ID, l, err, want)
		}
	})
}

// Property: PackProfiles finds a packing exactly when one exists, and what it returns
// is valid and uses exactly the profiles asked for.
func TestPropPackProfilesComplete(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.SampledFrom(devices.MIGModels()).Draw(t, "model")
		names := rapid.SliceOfN(rapid.SampledFrom(m.ProfileNames()), 1, 5).Draw(t, "profiles")
		got, err := m.PackProfiles(names)
		if exists := bruteExists(m, names, nil); (err == nil) != exists {
			t.Fatalf("%s %v: PackProfiles err=%v, a packing exists=%v", m.ID, names, err, exists)
		}
		if err != nil {
			return
		}
		if !bruteValid(m, got) {
			t.Fatalf("%s: packed %v is not valid", m.ID, got)
		}
		var gotNames []string
		for _, in := range got {
			gotNames = append(gotNames, in.Profile)
		}
		slices.Sort(gotNames)
		want := slices.Sorted(slices.Values(names))
		if !slices.Equal(gotNames, want) {
			t.Fatalf("packed profiles %v, asked %v", gotNames, want)
		}
	})
}

// Every shape's advertised devices can all be held at once, one resource after the
// other, with distinct IDs: the node offers exactly what it advertises. A dynamic GPU's
// MIG instances are held as DRA claims hold them, through a filter.
func TestCapacityIsFittable(t *testing.T) {
	for i, shape := range propNodeShapes {
		n := shape().Obj()
		for name, count := range n.Capacity() {
			if name == resources.GPUMilli || name == resources.GPUMemory || count == 0 || n.Free()[name] == 0 {
				continue // a whole GPU under nvidia.com/gpu may be gone with a fractional share
			}
			want := n.Free()[name]
			r := req(t, string(name), int(want))
			r.PerContainer = 1 // one container each, as MPS requires
			if len(n.DynamicGPUs()) > 0 && len(r.MIG) == 1 {
				r.Filter = firstOf{key: "all", perProfile: map[string]int{r.MIG[0].Profile: int(want)}}
			}
			a, ref := n.Fit(r)
			if ref != nil {
				t.Fatalf("shape %d: %d free %s do not fit: %s", i, want, name, ref)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(a.IDs())))) != int(want) {
				t.Fatalf("shape %d: %s: IDs %v are not %d distinct devices", i, name, a.IDs(), want)
			}
			if err := n.Commit(a); err != nil {
				t.Fatalf("shape %d: %v", i, err)
			}
			if n.Free()[name] != 0 {
				t.Fatalf("shape %d: %s still has %d free after holding them all", i, name, n.Free()[name])
			}
		}
	}
}

// checkHeldLayouts: the MIG instances held on each GPU form a layout the hardware
// accepts, never on a GPU held whole, and on a dynamic GPU they are exactly what it has
// carved.
func checkHeldLayouts(t *rapid.T, n *devices.NodeDevices, held []devices.Assignment, whole map[int]bool) {
	perGPU := map[int][]devices.Instance{}
	for _, a := range held {
		for _, d := range a.Devices {
			if d.Kind == devices.MIGDevice {
				perGPU[d.GPU] = append(perGPU[d.GPU], d.Instance)
			}
		}
	}
	dynamic := map[int]bool{}
	for _, i := range n.DynamicGPUs() {
		dynamic[i] = true
	}
	for _, g := range n.GPUs() {
		l := perGPU[g.Index]
		if len(l) > 0 && whole[g.Index] {
			t.Fatalf("GPU-%d is held whole and has MIG instances %v held", g.Index, l)
		}
		m, err := devices.LookupModel(string(g.Model))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.ValidateLayout(l); err != nil {
			t.Fatalf("GPU-%d: held instances %v: %v", g.Index, l, err)
		}
		if !dynamic[g.Index] {
			continue
		}
		got := n.Carved(g.Index)
		if !sameInstances(got, l) {
			t.Fatalf("GPU-%d carved %v, held %v", g.Index, got, l)
		}
	}
}

func sameInstances(a, b []devices.Instance) bool {
	key := func(l []devices.Instance) []string {
		out := make([]string, len(l))
		for i, in := range l {
			out[i] = in.String()
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}
