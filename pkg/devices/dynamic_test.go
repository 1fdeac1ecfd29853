package devices_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func dynamicNode(model string, count int) *devices.NodeDevices {
	return gt.MakeDevices(model, count).MIG(devices.MIGMixed, devices.LayoutDynamic).Obj()
}

// claimMIG is a filtered request for count instances of profile, as a DRA claim makes
// it (the filter takes Fit's first candidates).
func claimMIG(profile string, count int) devices.Request {
	return devices.Request{MIG: []devices.MIGCount{{Profile: profile, Count: int64(count)}},
		Filter: firstOf{key: "all", perProfile: map[string]int{profile: count}}}
}

func claimGPUs(n int) devices.Request {
	return devices.Request{Units: int64(n), Filter: firstOf{key: "all"}}
}

// place fits and commits one pod's request, returning its device IDs (nil if refused).
func place(t *testing.T, n *devices.NodeDevices, r devices.Request) []string {
	t.Helper()
	a, ref := n.Fit(r)
	if ref != nil {
		return nil
	}
	if err := n.Commit(a); err != nil {
		t.Fatalf("commit of fitted %v: %v", a, err)
	}
	return a.IDs()
}

// Pods asking one after the other for instances that make a full layout all get one
// GPU, in whatever order they come: the placements keep room for the others.
func TestDynamicPacksPodsOntoOneGPU(t *testing.T) {
	tests := []struct {
		model    string
		profiles []string
		want     []string // carved on GPU-0, as Instance strings sorted
	}{
		{"A100", []string{"3g.20gb", "2g.10gb", "2g.10gb"}, []string{"2g.10gb@0", "2g.10gb@2", "3g.20gb@4"}},
		{"A100", []string{"2g.10gb", "3g.20gb", "2g.10gb"}, []string{"2g.10gb@0", "2g.10gb@2", "3g.20gb@4"}},
		{"A100", []string{"2g.10gb", "2g.10gb", "3g.20gb"}, []string{"2g.10gb@0", "2g.10gb@2", "3g.20gb@4"}},
		{"A100", []string{"4g.20gb", "3g.20gb"}, []string{"3g.20gb@4", "4g.20gb@0"}},
		{"A100", []string{"3g.20gb", "4g.20gb"}, []string{"3g.20gb@4", "4g.20gb@0"}},
		{"A100", []string{"1g.10gb", "3g.20gb", "2g.10gb"}, []string{"1g.10gb@6", "2g.10gb@4", "3g.20gb@0"}},
		{"H100", []string{"2g.20gb", "3g.40gb", "2g.20gb"}, []string{"2g.20gb@0", "2g.20gb@2", "3g.40gb@4"}},
		{"A30", []string{"1g.6gb", "2g.12gb", "1g.6gb"}, []string{"1g.6gb@0", "1g.6gb@1", "2g.12gb@2"}},
	}
	for _, tc := range tests {
		t.Run(tc.model+" "+strings.Join(tc.profiles, "+"), func(t *testing.T) {
			n := dynamicNode(tc.model, 2)
			for _, p := range tc.profiles {
				ids := place(t, n, claimMIG(p, 1))
				if len(ids) != 1 || !strings.HasPrefix(ids[0], "GPU-0/") {
					t.Fatalf("%s went to %v, want GPU-0", p, ids)
				}
			}
			var got []string
			for _, in := range n.Carved(0) {
				got = append(got, in.String())
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("GPU-0 carved %v, want %v", got, tc.want)
			}
			if n.Carved(1) != nil {
				t.Errorf("GPU-1 carved %v, want nothing", n.Carved(1))
			}
		})
	}
}

// The point of a dynamic layout: 3g + 2g + 2g fits one A100, which mig-parted's
// all-balanced layout (1g + 1g + 2g + 3g) cannot hold.
func TestDynamicHoldsWhatAFixedLayoutCannot(t *testing.T) {
	fixed := gt.MakeDevices("A100", 1).MIG(devices.MIGMixed, devices.LayoutBalanced).Obj()
	dynamic := dynamicNode("A100", 1)
	var placedFixed, placedDynamic int
	for _, p := range []string{"3g.20gb", "2g.10gb", "2g.10gb"} {
		if place(t, fixed, claimMIG(p, 1)) != nil {
			placedFixed++
		}
		if place(t, dynamic, claimMIG(p, 1)) != nil {
			placedDynamic++
		}
	}
	if placedFixed != 2 || placedDynamic != 3 {
		t.Errorf("placed %d on all-balanced (want 2) and %d on %s (want 3)", placedFixed, placedDynamic, devices.LayoutDynamic)
	}
}

// One pod asking for several profiles at once gets them carved together, all or
// nothing.
func TestDynamicMultiProfileRequest(t *testing.T) {
	n := dynamicNode("A100", 1)
	r := devices.Request{MIG: []devices.MIGCount{{Profile: "2g.10gb", Count: 2}, {Profile: "3g.20gb", Count: 1}},
		Filter: firstOf{key: "all", perProfile: map[string]int{"2g.10gb": 2, "3g.20gb": 1}}}
	ids := place(t, n, r)
	want := []string{"GPU-0/mig-2g.10gb@0", "GPU-0/mig-2g.10gb@2", "GPU-0/mig-3g.20gb@4"}
	if !slices.Equal(ids, want) {
		t.Fatalf("picked %v, want %v", ids, want)
	}
	before := devices.DumpState(n)
	if _, ref := n.Fit(claimMIG("1g.5gb", 1)); ref == nil {
		t.Error("a full GPU fits one more 1g.5gb")
	}
	if devices.DumpState(n) != before {
		t.Error("a refused Fit changed the node")
	}
}

// A whole-GPU claim takes a dynamic GPU only while nothing is carved on it, and nothing
// is carved on a GPU held whole.
func TestDynamicWholeAndCarvedExclude(t *testing.T) {
	n := dynamicNode("A100", 2)
	if ids := place(t, n, claimMIG("1g.5gb", 1)); len(ids) != 1 || !strings.HasPrefix(ids[0], "GPU-0/") {
		t.Fatalf("first instance %v", ids)
	}
	if ids := place(t, n, claimGPUs(1)); !slices.Equal(ids, []string{"GPU-1"}) {
		t.Fatalf("whole GPU %v, want GPU-1 (GPU-0 has an instance)", ids)
	}
	if _, ref := n.Fit(claimGPUs(1)); ref == nil {
		t.Error("a second whole GPU fits")
	}
	carveOnWhole, err := devices.AssignmentFromIDs(n, []string{"GPU-1/mig-1g.5gb@0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Commit(carveOnWhole); err == nil || !strings.Contains(err.Error(), "held whole") {
		t.Errorf("carving on a GPU held whole: %v", err)
	}
	wholeOnCarved, _ := devices.AssignmentFromIDs(n, []string{"GPU-0"})
	if err := n.Commit(wholeOnCarved); err == nil || !strings.Contains(err.Error(), "carved") {
		t.Errorf("taking a carved GPU whole: %v", err)
	}
	// Instances keep going to GPU-0; GPU-1 is held whole.
	for range 6 {
		if ids := place(t, n, claimMIG("1g.5gb", 1)); len(ids) != 1 || !strings.HasPrefix(ids[0], "GPU-0/") {
			t.Fatalf("instance %v, want GPU-0", ids)
		}
	}
	if _, ref := n.Fit(claimMIG("1g.5gb", 1)); ref == nil {
		t.Error("an eighth 1g.5gb fits on one A100")
	}
}

// Extended resources never get a dynamic GPU, and their refusal says why.
func TestDynamicRefusesExtendedResources(t *testing.T) {
	n := dynamicNode("A100", 2)
	for _, r := range []devices.Request{req(t, "nvidia.com/gpu", 1), req(t, "nvidia.com/mig-3g.20gb", 1), req(t, "gantry.dev/gpu-milli", 500)} {
		_, ref := n.Fit(r)
		if ref == nil {
			t.Fatalf("%s fits a dynamic node", r)
		}
		for _, want := range []string{"GPU-0, GPU-1", devices.LayoutDynamic, "DRA ResourceClaims"} {
			if !strings.Contains(ref.Reason, want) {
				t.Errorf("%s: refusal %q lacks %q", r, ref.Reason, want)
			}
		}
	}
	if got := n.FitCandidates(req(t, "nvidia.com/gpu", 1)); len(got) != 0 {
		t.Errorf("FitCandidates for nvidia.com/gpu: %v", got)
	}
	_, ref := gt.MakeDevices("A100", 1).Obj().Fit(req(t, "nvidia.com/gpu", 2))
	if strings.Contains(ref.Reason, devices.LayoutDynamic) {
		t.Errorf("a node without dynamic GPUs mentions them: %q", ref.Reason)
	}
}

// A dynamic GPU counts in gpu-milli like any other: whole, less what is carved. Under
// each MIG profile it offers how many instances of that profile alone could still be
// carved, and no nvidia.com/gpu.
func TestDynamicAccounting(t *testing.T) {
	n := dynamicNode("A100", 2)
	wantCap := gt.Req("gantry.dev/gpu-milli", "2000", "gantry.dev/gpu-memory", "81920", "nvidia.com/mig-1g.5gb", "14", "nvidia.com/mig-1g.5gb.me", "2",
		"nvidia.com/mig-1g.10gb", "8", "nvidia.com/mig-2g.10gb", "6", "nvidia.com/mig-3g.20gb", "4", "nvidia.com/mig-4g.20gb", "2", "nvidia.com/mig-7g.40gb", "2")
	if capy := n.Capacity(); !sameVector(capy, wantCap) {
		t.Fatalf("capacity %v, want %v", capy, wantCap)
	}
	place(t, n, claimMIG("3g.20gb", 1))
	place(t, n, claimGPUs(1))
	if got := n.FreeMilliByGPU(); !slices.Equal(got, []resources.MilliGPU{1000 - 428, 0}) {
		t.Errorf("free per GPU %v, want [572 0]", got)
	}
	m := mustModel(t, "A100")
	// GPU-0 has 3g.20gb@4: slices 0-3 and 4 compute slices are left.
	wantFree := gt.Req("gantry.dev/gpu-milli", "572", "gantry.dev/gpu-memory", fmt.Sprint(int64(m.Memory)-19968), "nvidia.com/mig-1g.5gb", "4", "nvidia.com/mig-1g.5gb.me", "1",
		"nvidia.com/mig-1g.10gb", "2", "nvidia.com/mig-2g.10gb", "2", "nvidia.com/mig-3g.20gb", "1", "nvidia.com/mig-4g.20gb", "1")
	if free := n.Free(); !sameVector(free, wantFree) {
		t.Errorf("free %v, want %v", free, wantFree)
	}
	if err := devices.FreeViewMismatch(n); err != nil {
		t.Error(err)
	}
}

// A bound pod's device IDs rebuild and commit on a dynamic GPU (a restarted
// controller), and IDs the placement rules reject do not.
func TestDynamicDeviceIDs(t *testing.T) {
	tests := []struct {
		held    []string
		ids     []string
		wantErr string
	}{
		{nil, []string{"GPU-0/mig-3g.20gb@4", "GPU-0/mig-2g.10gb@0"}, ""},
		{nil, []string{"GPU-0/mig-3g.20gb@2"}, "no MIG placement"},
		{[]string{"GPU-0/mig-3g.20gb@0"}, []string{"GPU-0/mig-2g.10gb@2"}, "cannot carve"},
		{[]string{"GPU-0/mig-1g.5gb+me@0"}, []string{"GPU-0/mig-1g.5gb+me@1"}, "cannot carve"},
		{[]string{"GPU-0/mig-2g.10gb@0"}, []string{"GPU-0/mig-2g.10gb@0"}, "already in use"},
		{nil, []string{"GPU-0/mig-1g.5gb@0/replica-0"}, "no MIG instances"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.ids, ","), func(t *testing.T) {
			n := dynamicNode("A100", 1)
			if len(tc.held) > 0 {
				a, err := devices.AssignmentFromIDs(n, tc.held)
				if err != nil {
					t.Fatal(err)
				}
				if err := n.Commit(a); err != nil {
					t.Fatal(err)
				}
			}
			before := devices.DumpState(n)
			a, err := devices.AssignmentFromIDs(n, tc.ids)
			if err == nil {
				err = n.Commit(a)
			}
			wantErr(t, err, tc.wantErr)
			if err != nil {
				if devices.DumpState(n) != before {
					t.Error("a failed commit changed the node")
				}
				return
			}
			if err := n.Release(a); err != nil {
				t.Fatal(err)
			}
			if err := n.Release(a); err == nil || !strings.Contains(err.Error(), "not carved") {
				t.Errorf("second release: %v", err)
			}
			if devices.DumpState(n) != before {
				t.Error("release did not restore the node")
			}
		})
	}
}

// Fixed instances of the profile go first (they cost no GPU its room), then the
// fullest dynamic GPU.
func TestDynamicCandidateOrder(t *testing.T) {
	gpus := append(mustGPUs(t, "A100", 1, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutBalanced}),
		mustGPUs(t, "A100", 2, devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic})...)
	for i := range gpus {
		gpus[i].Index = i
	}
	n, err := devices.NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GPU-0/mig-2g.10gb@0", "GPU-1/mig-2g.10gb@0", "GPU-1/mig-2g.10gb@2", "GPU-1/mig-2g.10gb@4"} {
		if ids := place(t, n, claimMIG("2g.10gb", 1)); !slices.Equal(ids, []string{want}) {
			t.Fatalf("picked %v, want %s", ids, want)
		}
	}
	// FitCandidates and FitOn go GPU by GPU: GPU-1 is full of 2g, GPU-2 carves one.
	var got []string
	for _, a := range n.FitCandidates(claimMIG("2g.10gb", 1)) {
		got = append(got, a.IDs()...)
	}
	if want := []string{"GPU-2/mig-2g.10gb@0"}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if a, ref := n.FitOn(claimGPUs(1), 2); ref != nil || a.IDs()[0] != "GPU-2" {
		t.Errorf("FitOn GPU-2 whole: %v %v", a, ref)
	}
	if _, ref := n.FitOn(claimGPUs(1), 1); ref == nil {
		t.Error("FitOn GPU-1 whole fits: it has instances carved")
	}
}

func mustGPUs(t *testing.T, model string, count int, s devices.Sharing) []devices.GPU {
	t.Helper()
	gpus, err := devices.NewGPUs(mustModel(t, model), count, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return gpus
}

// Sharing configs a dynamic layout cannot have.
func TestDynamicValidation(t *testing.T) {
	dyn := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
	withReplicas := dyn
	withReplicas.Resources = []devices.ReplicatedResource{gt.Replicated("nvidia.com/mig-1g.5gb", 2)}
	wantErr(t, devices.ValidateSharing(mustModel(t, "A100"), dyn), "")
	wantErr(t, devices.ValidateSharing(mustModel(t, "A100"), withReplicas), "time-sliced MIG devices need a fixed layout")
	wantErr(t, devices.ValidateSharing(mustModel(t, "T4"), dyn), "does not support MIG")
	gpus := mustGPUs(t, "A100", 1, dyn)
	gpus[0].Instances = []devices.Instance{{Profile: "7g.40gb", Start: 0}}
	_, err := devices.NewNodeDevices(gpus)
	wantErr(t, err, "carves instances at allocation time")
	if !dyn.DynamicMIG() || (devices.Sharing{Mode: devices.Exclusive, Layout: devices.LayoutDynamic}).DynamicMIG() {
		t.Error("DynamicMIG reads the layout only in mode mig")
	}
}
