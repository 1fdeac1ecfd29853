package devices_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
)

// firstOf is a filter that allows the candidates accept allows and takes the first
// want of them, in Fit's order (at most perProfile[p] instances of MIG profile p when
// set, as a filter knows its request); broken returns a fixed (bad) answer instead.
type firstOf struct {
	key        string
	accept     func(c devices.Candidate) bool
	perProfile map[string]int
	broken     []int
}

func (f firstOf) Key() string { return f.key }

func (f firstOf) Allows(c devices.Candidate) bool {
	return f.broken != nil || f.accept == nil || f.accept(c)
}

func (f firstOf) Choose(cands []devices.Candidate, want int) ([]int, string) {
	if f.broken != nil {
		return f.broken, ""
	}
	var out []int
	taken := map[string]int{}
	for i, c := range cands {
		if len(out) == want || (f.accept != nil && !f.accept(c)) {
			continue
		}
		if c.Instance != nil && f.perProfile != nil {
			if taken[c.Instance.Profile] == f.perProfile[c.Instance.Profile] {
				continue
			}
			taken[c.Instance.Profile]++
		}
		out = append(out, i)
	}
	if len(out) < want {
		return nil, fmt.Sprintf("only %d allowed", len(out))
	}
	return out, ""
}

func TestFitFilterKeepsPicksWhenAllowingAll(t *testing.T) {
	tests := []struct {
		name string
		node *gt.DevicesWrapper
		held []string
		req  []any
		per  map[string]int
	}{
		{"whole GPUs in one NVLink domain", gt.MakeDevices("H100", 8).NVLink(4), []string{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 4}, nil},
		{"one GPU in the tightest switch", gt.MakeDevices("H100", 8).NVLink(4), []string{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 1}, nil},
		{"GPUs spanning domains", gt.MakeDevices("H100", 8).NVLink(4), []string{"nvidia.com/gpu=1"}, []any{"nvidia.com/gpu", 6}, nil},
		{"MIG fullest GPU first", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced"), []string{"nvidia.com/mig-1g.5gb=1"}, []any{"nvidia.com/mig-1g.5gb", 1}, nil},
		{"two MIG profiles", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced"), nil, []any{"nvidia.com/mig-1g.5gb", 2, "nvidia.com/mig-2g.10gb", 1}, map[string]int{"1g.5gb": 2, "2g.10gb": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			for _, h := range tc.held {
				commitHeld(t, n, h)
			}
			r := req(t, tc.req...)
			plain, ref := n.Fit(r)
			if ref != nil {
				t.Fatalf("unfiltered: %v", ref)
			}
			r.Filter = firstOf{key: "all", perProfile: tc.per}
			before := devices.DumpState(n)
			got, ref := n.Fit(r)
			if ref != nil {
				t.Fatalf("filtered: %v", ref)
			}
			if !slices.Equal(got.IDs(), plain.IDs()) {
				t.Errorf("filtered picks %v, unfiltered %v", got.IDs(), plain.IDs())
			}
			if devices.DumpState(n) != before {
				t.Error("Fit with a filter changed the node")
			}
		})
	}
}

// commitHeld commits a "name=amount" request on n.
func commitHeld(t *testing.T, n *devices.NodeDevices, held string) {
	t.Helper()
	name, value, _ := strings.Cut(held, "=")
	amount, err := strconv.Atoi(value)
	if err != nil {
		t.Fatal(err)
	}
	a, ref := n.Fit(req(t, name, amount))
	if ref != nil {
		t.Fatalf("held %s: %v", held, ref)
	}
	if err := n.Commit(a); err != nil {
		t.Fatal(err)
	}
}

func TestFitFilterNarrows(t *testing.T) {
	oddGPUs := func(c devices.Candidate) bool { return c.GPU.Index%2 == 1 }
	atStart0 := func(c devices.Candidate) bool { return c.Instance != nil && c.Instance.Start == 0 }
	tests := []struct {
		name        string
		node        *gt.DevicesWrapper
		req         []any
		filter      firstOf
		wantIDs     []string
		wantRefusal string
	}{
		{"odd GPUs only", gt.MakeDevices("H100", 8).NVLink(4), []any{"nvidia.com/gpu", 3}, firstOf{key: "odd", accept: oddGPUs},
			[]string{"GPU-1", "GPU-3", "GPU-5"}, ""},
		{"not enough allowed", gt.MakeDevices("H100", 4), []any{"nvidia.com/gpu", 3}, firstOf{key: "odd", accept: oddGPUs},
			nil, "only 2 allowed"},
		{"MIG instances at slot 0", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-1g.5gb"), []any{"nvidia.com/mig-1g.5gb", 2}, firstOf{key: "s0", accept: atStart0},
			[]string{"GPU-0/mig-1g.5gb@0", "GPU-1/mig-1g.5gb@0"}, ""},
		{"broken filter: too few", gt.MakeDevices("H100", 4), []any{"nvidia.com/gpu", 2}, firstOf{key: "bad", broken: []int{0}},
			nil, "chose 1 devices, want 2"},
		{"broken filter: twice", gt.MakeDevices("H100", 4), []any{"nvidia.com/gpu", 2}, firstOf{key: "bad", broken: []int{1, 1}},
			nil, "twice or out of range"},
		{"broken filter: wrong profile count", gt.MakeDevices("A100", 1).MIG(devices.MIGMixed, "all-balanced"), []any{"nvidia.com/mig-1g.5gb", 1, "nvidia.com/mig-2g.10gb", 1}, firstOf{key: "bad", broken: []int{0, 1}},
			nil, "chose 2 of MIG profile 1g.5gb"},
		{"replicas are not DRA devices", gt.MakeDevices("T4", 2).TimeSlicing(4, false), []any{"nvidia.com/gpu", 1}, firstOf{key: "all"},
			nil, "need 1, 0 free"},
		{"MIG single instances are not offered", gt.MakeDevices("H100", 1).MIG(devices.MIGSingle, "all-3g.40gb"), []any{"nvidia.com/mig-3g.40gb", 1}, firstOf{key: "all"},
			nil, "need 1, 0 free"},
		{"shared replicas refused", gt.MakeDevices("T4", 1).TimeSlicing(2, true), []any{"nvidia.com/gpu.shared", 1}, firstOf{key: "all"},
			nil, "filtered requests take whole GPUs or MIG instances only"},
		{"shares refused", gt.MakeDevices("V100", 1).Fractional(), []any{"gantry.dev/gpu-milli", 500}, firstOf{key: "all"},
			nil, "filtered requests take whole GPUs or MIG instances only"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := req(t, tc.req...)
			r.Filter = tc.filter
			a, ref := tc.node.Obj().Fit(r)
			if tc.wantRefusal != "" {
				if ref == nil || !strings.Contains(ref.Reason, tc.wantRefusal) {
					t.Fatalf("refusal %v, want one containing %q", ref, tc.wantRefusal)
				}
				return
			}
			if ref != nil {
				t.Fatalf("refused: %v", ref)
			}
			if !slices.Equal(a.IDs(), tc.wantIDs) {
				t.Errorf("picked %v, want %v", a.IDs(), tc.wantIDs)
			}
		})
	}
}

func TestFitCandidatesFilter(t *testing.T) {
	n := gt.MakeDevices("H100", 4).Obj()
	r := devices.Request{Units: 1, Filter: firstOf{key: "odd", accept: func(c devices.Candidate) bool { return c.GPU.Index%2 == 1 }}}
	var got []string
	for _, a := range n.FitCandidates(r) {
		got = append(got, a.IDs()...)
	}
	if want := []string{"GPU-1", "GPU-3"}; !slices.Equal(got, want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	if _, ref := n.FitOn(r, 2); ref == nil {
		t.Error("FitOn GPU-2 fits, want a refusal: the filter rules it out")
	}
	if a, ref := n.FitOn(r, 3); ref != nil || a.IDs()[0] != "GPU-3" {
		t.Errorf("FitOn GPU-3: %v %v", a, ref)
	}
	if r.FilterKey() != "odd" || (devices.Request{}).FilterKey() != "" {
		t.Errorf("FilterKey %q", r.FilterKey())
	}
	if _, ref := n.Fit(devices.Request{Units: 1, MIG: []devices.MIGCount{{Profile: "1g.10gb", Count: 1}}, Filter: firstOf{}}); ref == nil {
		t.Error("mixed kinds with a filter fit")
	}
}
