package devices_test

import (
	"slices"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
)

// everyOf is a sized filter taking every candidate accept allows, refusing when a held
// device is one it allows; it records the held devices it was shown.
type everyOf struct {
	accept func(c devices.Candidate) bool
	shown  *[]string
}

func (f everyOf) Key() string                                     { return "every" }
func (f everyOf) Allows(c devices.Candidate) bool                 { return f.accept(c) }
func (f everyOf) Choose([]devices.Candidate, int) ([]int, string) { return nil, "not sized" }

func (f everyOf) ChooseSized(cands, held []devices.Candidate, _ int) ([]int, string) {
	for _, h := range held {
		*f.shown = append(*f.shown, h.Device.ID())
		if f.accept(h) {
			return nil, "held: " + h.Device.ID()
		}
	}
	var out []int
	for i, c := range cands {
		if f.accept(c) {
			out = append(out, i)
		}
	}
	return out, ""
}

// TestSizedFilterTakesWhatItChooses: a sized filter sees the held devices of the
// request's kind, and Fit returns as many devices as it chooses (at least the
// request's count); a dynamic GPU's MIG placements are refused to it.
func TestSizedFilterTakesWhatItChooses(t *testing.T) {
	below := func(n int) func(devices.Candidate) bool {
		return func(c devices.Candidate) bool { return c.GPU.Index < n }
	}
	tests := []struct {
		name      string
		node      *gt.DevicesWrapper
		held      []string
		req       devices.Request
		accept    func(devices.Candidate) bool
		want      []string
		wantShown []string
		refusal   string
	}{
		{"every GPU below 3", gt.MakeDevices("H100", 8), []string{"GPU-5"}, devices.Request{Units: 1}, below(3),
			[]string{"GPU-0", "GPU-1", "GPU-2"}, []string{"GPU-5"}, ""},
		{"a held GPU it allows", gt.MakeDevices("H100", 8), []string{"GPU-1", "GPU-6"}, devices.Request{Units: 1}, below(3),
			nil, []string{"GPU-1"}, "held: GPU-1"},
		{"held MIG instances of the profile only", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced"), []string{"GPU-0/mig-1g.5gb@2", "GPU-0/mig-3g.20gb@4"},
			devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 1}}}, below(0),
			nil, []string{"GPU-0/mig-1g.5gb@2"}, "chose 0 devices"},
		{"every 1g.5gb of GPU-1", gt.MakeDevices("A100", 2).MIG(devices.MIGMixed, "all-balanced"), nil,
			devices.Request{MIG: []devices.MIGCount{{Profile: "1g.5gb", Count: 1}}}, func(c devices.Candidate) bool { return c.GPU.Index == 1 },
			[]string{"GPU-1/mig-1g.5gb@2", "GPU-1/mig-1g.5gb@3"}, nil, ""},
		{"a dynamic GPU's placements", gt.MakeDevices("A100", 1).Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}), nil,
			devices.Request{MIG: []devices.MIGCount{{Profile: "3g.20gb", Count: 1}}}, below(8),
			nil, nil, "cannot take the placements of GPU-0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.node.Obj()
			if len(tc.held) > 0 {
				a, err := devices.AssignmentFromIDs(n, tc.held)
				if err != nil {
					t.Fatal(err)
				}
				if err := n.Commit(a); err != nil {
					t.Fatal(err)
				}
			}
			var shown []string
			r := tc.req
			r.Filter = everyOf{accept: tc.accept, shown: &shown}
			a, ref := n.Fit(r)
			if tc.refusal != "" {
				if ref == nil || !strings.Contains(ref.Reason, tc.refusal) {
					t.Errorf("Fit %v (%v), want a refusal with %q", a.IDs(), ref, tc.refusal)
				}
			} else if ref != nil || !slices.Equal(a.IDs(), tc.want) {
				t.Errorf("Fit %v (%v), want %v", a.IDs(), ref, tc.want)
			}
			if !slices.Equal(shown, tc.wantShown) {
				t.Errorf("shown held %v, want %v", shown, tc.wantShown)
			}
		})
	}
}
