package devices_test

import (
	"slices"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestFit(t *testing.T) {
	type held = []string // requests committed before the one under test, as "name=amount"
	tests := []struct {
		name string
		node *gt.DevicesWrapper
		held held
		req  []any
		// wantIDs: the devices picked; wantRefusal: the short resource when it must not fit
		wantIDs     []string
		wantRefusal resources.Name
	}{
		{"4 whole GPUs stay in one NVLink domain", gt.MakeDevices("H100", 8).NVLink(4),
			held{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 4},
			[]string{"GPU-4", "GPU-5", "GPU-6", "GPU-7"}, ""},
		{"1 GPU goes to the tightest domain and switch", gt.MakeDevices("H100", 8).NVLink(4),
			held{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 1},
			[]string{"GPU-1"}, ""},
		{"2 GPUs prefer one PCIe switch", gt.MakeDevices("H100", 8).NVLink(4),
			held{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 2},
			[]string{"GPU-2", "GPU-3"}, ""},
		{"6 GPUs span domains", gt.MakeDevices("H100", 8).NVLink(4),
			held{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 6},
			[]string{"GPU-2", "GPU-3", "GPU-4", "GPU-5", "GPU-6", "GPU-7"}, ""},
		{"too many GPUs", gt.MakeDevices("H100", 8), held{"nvidia.com/gpu=4"}, []any{"nvidia.com/gpu", 5}, nil, resources.NvidiaGPU},
		{"unhealthy GPUs offer nothing", gt.MakeDevices("H100", 2).Unhealthy(0), nil, []any{"nvidia.com/gpu", 2}, nil, resources.NvidiaGPU},
		{"unhealthy GPU skipped", gt.MakeDevices("H100", 2).Unhealthy(0), nil, []any{"nvidia.com/gpu", 1}, []string{"GPU-1"}, ""},
		{"MIG mixed picks the fullest GPU", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced"),
			held{"nvidia.com/mig-1g.5gb=1"}, []any{"nvidia.com/mig-1g.5gb", 1},
			[]string{"GPU-0/mig-1g.5gb@3"}, ""},
		{"MIG mixed out of a profile", gt.MakeDevices("A100", 1).MIG(devices.MIGMixed, "all-balanced"),
			held{"nvidia.com/mig-3g.20gb=1"}, []any{"nvidia.com/mig-3g.20gb", 1}, nil, "nvidia.com/mig-3g.20gb"},
		{"MIG profile not on node", gt.MakeDevices("A100", 1).MIG(devices.MIGMixed, "all-balanced"), nil, []any{"nvidia.com/mig-7g.40gb", 1}, nil, "nvidia.com/mig-7g.40gb"},
		{"MIG single serves nvidia.com/gpu", gt.MakeDevices("H100", 2).MIG(devices.MIGSingle, "all-3g.40gb"),
			nil, []any{"nvidia.com/gpu", 3},
			[]string{"GPU-0/mig-3g.40gb@0", "GPU-0/mig-3g.40gb@4", "GPU-1/mig-3g.40gb@0"}, ""},
		{"MIG single ignores mig-<profile>", gt.MakeDevices("H100", 1).MIG(devices.MIGSingle, "all-3g.40gb"), nil, []any{"nvidia.com/mig-3g.40gb", 1}, nil, "nvidia.com/mig-3g.40gb"},
		{"time-slicing packs replicas", gt.MakeDevices("T4", 2).TimeSlicing(4, false),
			held{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 2},
			[]string{"GPU-0/replica-1", "GPU-0/replica-2"}, ""},
		{"renamed replicas are gpu.shared", gt.MakeDevices("T4", 1).TimeSlicing(2, true), nil, []any{"nvidia.com/gpu.shared", 2},
			[]string{"GPU-0/replica-0", "GPU-0/replica-1"}, ""},
		{"renamed replicas do not serve nvidia.com/gpu", gt.MakeDevices("T4", 1).TimeSlicing(2, true), nil, []any{"nvidia.com/gpu", 1}, nil, resources.NvidiaGPU},
		{"MPS replicas", gt.MakeDevices("A100", 1).MPS(4, 0), nil, []any{"nvidia.com/gpu", 1}, []string{"GPU-0/replica-0"}, ""},
		{"fraction best fit", gt.MakeDevices("V100", 3).Fractional(),
			held{"gantry.dev/gpu-milli=500", "gantry.dev/gpu-milli=800"}, []any{"gantry.dev/gpu-milli", 200},
			[]string{"GPU-1/share-200m"}, ""},
		{"fraction needs room", gt.MakeDevices("V100", 1).Fractional(),
			held{"gantry.dev/gpu-milli=600"}, []any{"gantry.dev/gpu-milli", 500}, nil, resources.GPUMilli},
		{"fraction by memory", gt.MakeDevices("V100", 1).Fractional(), nil, []any{"gantry.dev/gpu-memory", 4096},
			[]string{"GPU-0/share-250m-4096Mi"}, ""},
		{"whole GPU on fractional node takes a free GPU", gt.MakeDevices("V100", 2).Fractional(),
			held{"gantry.dev/gpu-milli=100"}, []any{"nvidia.com/gpu", 1}, []string{"GPU-1"}, ""},
		{"whole GPU on fractional node needs an entirely free GPU", gt.MakeDevices("V100", 1).Fractional(),
			held{"gantry.dev/gpu-milli=100"}, []any{"nvidia.com/gpu", 1}, nil, resources.NvidiaGPU},
		{"fraction on exclusive node", gt.MakeDevices("V100", 1), nil, []any{"gantry.dev/gpu-milli", 100}, nil, resources.GPUMilli},
		{"no GPU request", gt.MakeDevices("V100", 1), nil, []any{"cpu", 1000}, []string{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			for _, h := range tc.held {
				name, amt, _ := strings.Cut(h, "=")
				a, ref := n.Fit(req(t, name, int(resources.MustParse(resources.Name(name), amt))))
				if ref != nil {
					t.Fatalf("setup %s: %s", h, ref)
				}
				if err := n.Commit(a); err != nil {
					t.Fatalf("setup %s: %v", h, err)
				}
			}
			before := n.Free()
			a, ref := n.Fit(req(t, tc.req...))
			if !sameVector(n.Free(), before) {
				t.Fatalf("Fit changed the node")
			}
			if tc.wantRefusal != "" {
				if ref == nil || ref.Resource != tc.wantRefusal || ref.Reason == "" {
					t.Fatalf("want refusal on %s, got %v %s", tc.wantRefusal, a, ref)
				}
				return
			}
			if ref != nil {
				t.Fatalf("refused: %s", ref)
			}
			if !slices.Equal(a.IDs(), tc.wantIDs) {
				t.Fatalf("picked %v, want %v", a.IDs(), tc.wantIDs)
			}
			if err := n.Commit(a); err != nil {
				t.Fatalf("commit of a fitted assignment: %v", err)
			}
		})
	}
}

func TestModelConstraint(t *testing.T) {
	n := gt.MakeDevices("V100", 2).Fractional().Obj()
	r := req(t, "gantry.dev/gpu-milli", 300)
	r.ModelConstraint = []devices.ModelID{"T4"}
	if _, ref := n.Fit(r); ref == nil {
		t.Fatal("a T4-only request must not fit a V100 node")
	}
	r.ModelConstraint = []devices.ModelID{"T4", "V100-SXM2-16GB"}
	if _, ref := n.Fit(r); ref != nil {
		t.Fatalf("V100 allowed, got %s", ref)
	}
}

func TestCapacityAndFree(t *testing.T) {
	tests := []struct {
		name string
		node *gt.DevicesWrapper
		// want: Capacity() as a vector string
		want string
	}{
		{"exclusive", gt.MakeDevices("H100", 8), "gantry.dev/gpu-memory=655360,gantry.dev/gpu-milli=8000,nvidia.com/gpu=8"},
		{"mig mixed balanced", gt.MakeDevices("A100", 1).MIG(devices.MIGMixed, "all-balanced"),
			"gantry.dev/gpu-memory=39552,gantry.dev/gpu-milli=997,nvidia.com/mig-1g.5gb=2,nvidia.com/mig-2g.10gb=1,nvidia.com/mig-3g.20gb=1"},
		{"mig single", gt.MakeDevices("A100", 2).MIG(devices.MIGSingle, "all-1g.5gb"), "gantry.dev/gpu-memory=68096,gantry.dev/gpu-milli=1988,nvidia.com/gpu=14"},
		{"time-slicing renamed", gt.MakeDevices("T4", 2).TimeSlicing(4, true), "gantry.dev/gpu-memory=32768,gantry.dev/gpu-milli=2000,nvidia.com/gpu.shared=8"},
		{"mps with limit", gt.MakeDevices("A100", 1).MPS(4, 8192), "gantry.dev/gpu-memory=32768,gantry.dev/gpu-milli=1000,nvidia.com/gpu=4"},
		{"fractional", gt.MakeDevices("V100", 2).Fractional(), "gantry.dev/gpu-memory=32768,gantry.dev/gpu-milli=2000,nvidia.com/gpu=2"},
		{"unhealthy excluded", gt.MakeDevices("V100", 2).Unhealthy(1), "gantry.dev/gpu-memory=16384,gantry.dev/gpu-milli=1000,nvidia.com/gpu=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			if got := n.Capacity().String(); got != tc.want {
				t.Fatalf("Capacity = %s, want %s", got, tc.want)
			}
			if !sameVector(n.Free(), n.Capacity()) {
				t.Fatalf("Free %s != Capacity %s with nothing held", n.Free(), n.Capacity())
			}
		})
	}
}

func TestFractionalFreeTracksShares(t *testing.T) {
	n := gt.MakeDevices("V100", 1).Fractional().Obj()
	a, _ := n.Fit(req(t, "gantry.dev/gpu-milli", 300, "gantry.dev/gpu-memory", 1024))
	if err := n.Commit(a); err != nil {
		t.Fatal(err)
	}
	want := "gantry.dev/gpu-memory=15360,gantry.dev/gpu-milli=700"
	if got := n.Free().String(); got != want {
		t.Fatalf("Free = %s, want %s (no whole GPU left)", got, want)
	}
	if got := n.FreeMilliByGPU(); !slices.Equal(got, []resources.MilliGPU{700}) {
		t.Fatalf("FreeMilliByGPU = %v", got)
	}
}

func TestFitCandidatesAndFitOn(t *testing.T) {
	n := gt.MakeDevices("V100", 3).Fractional().Obj()
	for _, m := range []int{500, 800} {
		a, _ := n.Fit(req(t, "gantry.dev/gpu-milli", m))
		if err := n.Commit(a); err != nil {
			t.Fatal(err)
		}
	}
	r := req(t, "gantry.dev/gpu-milli", 400)
	var ids []string
	for _, c := range n.FitCandidates(r) {
		ids = append(ids, c.IDs()...)
	}
	// GPU-0 holds 500m (400 fits), GPU-1 holds 800m (does not), GPU-2 is empty.
	if want := []string{"GPU-0/share-400m", "GPU-2/share-400m"}; !slices.Equal(ids, want) {
		t.Fatalf("candidates %v, want %v", ids, want)
	}
	if _, ref := n.FitOn(r, 1); ref == nil {
		t.Fatal("FitOn GPU-1 must refuse: 200m free")
	}
	if a, ref := n.FitOn(r, 2); ref != nil || a.IDs()[0] != "GPU-2/share-400m" {
		t.Fatalf("FitOn GPU-2 = %v %s", a, ref)
	}
	if _, ref := n.FitOn(req(t, "nvidia.com/gpu", 2), 0); ref == nil {
		t.Fatal("FitOn must refuse multi-device requests")
	}
	if got := n.FitCandidates(req(t, "gantry.dev/gpu-milli", 900)); len(got) != 1 || got[0].IDs()[0] != "GPU-2/share-900m" {
		t.Fatalf("900m candidates: %v", got)
	}
}

func TestNewNodeDevicesRejectsBadGPUs(t *testing.T) {
	a100 := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle}
	tests := []struct {
		name string
		gpus []devices.GPU
		// wantErr: substring of the error naming the GPU and the problem
		wantErr string
	}{
		{"duplicate index", []devices.GPU{{Index: 0, Model: "T4"}, {Index: 0, Model: "T4"}}, "GPU-0: index appears twice"},
		{"negative index", []devices.GPU{{Index: -1, Model: "T4"}}, "negative"},
		{"unknown model", []devices.GPU{{Index: 0, Model: "Z9"}}, "GPU-0: model"},
		{"bad layout", []devices.GPU{{Index: 0, Model: "A100", Sharing: a100, Instances: inst("4g.20gb@0 4g.20gb@0")}}, "overlaps"},
		{"instances without MIG mode", []devices.GPU{{Index: 0, Model: "A100", Instances: inst("7g.40gb@0")}}, "sharing mode"},
		{"single strategy two profiles", []devices.GPU{
			{Index: 0, Model: "A100", Sharing: a100, Instances: inst("7g.40gb@0")},
			{Index: 1, Model: "A100", Sharing: a100, Instances: inst("3g.20gb@0")}}, "one profile"},
		{"mixed strategies", []devices.GPU{
			{Index: 0, Model: "A100", Sharing: a100, Instances: inst("7g.40gb@0")},
			{Index: 1, Model: "A100", Sharing: devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}, Instances: inst("3g.20gb@0")}}, "MIG strategy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := devices.NewNodeDevices(tc.gpus)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

// TestNewNodeDevicesWith checks that pre-resolved models are used as given, that other
// names still go to the catalog, and that unknown names are errors naming the GPU.
func TestNewNodeDevicesWith(t *testing.T) {
	h100 := mustModel(t, "H100")
	t4 := mustModel(t, "T4")
	tests := []struct {
		name   string
		models []devices.Model
		gpus   []devices.GPU
		// wantErr is a substring of the expected error ("" = no error); wantMemory is
		// the node's gantry.dev/gpu-memory capacity otherwise.
		wantErr    string
		wantMemory int64
	}{
		{name: "known model used", models: []devices.Model{h100}, gpus: []devices.GPU{{Index: 0, Model: h100.ID, Healthy: true}}, wantMemory: 80 * 1024},
		{name: "other model looked up", models: []devices.Model{h100}, gpus: []devices.GPU{{Index: 0, Model: t4.ID, Healthy: true}, {Index: 1, Model: h100.ID, Healthy: true}}, wantMemory: 96 * 1024},
		{name: "no models", gpus: []devices.GPU{{Index: 0, Model: "L4", Healthy: true}}, wantMemory: 24 * 1024},
		{name: "unknown model", models: []devices.Model{h100}, gpus: []devices.GPU{{Index: 3, Model: "Z9", Healthy: true}}, wantErr: "GPU-3: model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := devices.NewNodeDevicesWith(tc.models, tc.gpus)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := int64(n.Capacity()[resources.GPUMemory]); got != tc.wantMemory {
				t.Fatalf("gpu-memory capacity %d, want %d", got, tc.wantMemory)
			}
		})
	}
}

// TestFreeMilliViewReplicas: a GPU time-sliced three ways offers 3 × 333m, not 1000m, and
// the view follows commits and health changes without being rebuilt.
func TestFreeMilliViewReplicas(t *testing.T) {
	n := gt.MakeDevices("T4", 2).TimeSlicing(3, false).Obj()
	if got, want := n.FreeMilliView(), []resources.MilliGPU{999, 999}; !slices.Equal(got, want) {
		t.Fatalf("view %v, want %v", got, want)
	}
	a, ref := n.Fit(req(t, "nvidia.com/gpu", 1))
	if ref != nil {
		t.Fatal(ref)
	}
	if err := n.Commit(a); err != nil {
		t.Fatal(err)
	}
	if err := n.SetHealthy(1, false); err != nil {
		t.Fatal(err)
	}
	// The replica goes to the lower index among equally full GPUs: GPU-0.
	if got, want := n.FreeMilliView(), []resources.MilliGPU{666, 0}; !slices.Equal(got, want) {
		t.Fatalf("view %v, want %v", got, want)
	}
	if got := n.FreeMilliByGPU(); !slices.Equal(got, n.FreeMilliView()) {
		t.Fatalf("FreeMilliByGPU %v differs from the view %v", got, n.FreeMilliView())
	}
}
