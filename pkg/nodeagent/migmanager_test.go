package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

func TestMIGLayoutsAppliedAndReadBack(t *testing.T) {
	tests := []struct {
		layout   string
		strategy devices.MIGStrategy
		// want is each GPU's layout as read back through NVML.
		want string
	}{
		{"all-1g.5gb", devices.MIGSingle, "[1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6]"},
		{"all-3g.20gb", devices.MIGSingle, "[3g.20gb@0 3g.20gb@4]"},
		{"all-7g.40gb", devices.MIGSingle, "[7g.40gb@0]"},
		{"all-balanced", devices.MIGMixed, "[2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4]"},
		{"custom:4g.20gb,2g.10gb,1g.5gb", devices.MIGMixed, "[4g.20gb@0 2g.10gb@4 1g.5gb@6]"},
		{"all-disabled", devices.MIGSingle, "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.layout, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			node := &fakeNode{}
			mgr := nodeagent.NewMIGManager(b.Server(), podCount(0), node, tc.strategy)
			st, err := mgr.Apply(context.Background(), tc.layout)
			if err != nil || st.State != nodeagent.MIGApplied {
				t.Fatalf("Apply: %v %s", err, st.Annotation())
			}
			if got := fmt.Sprint(statesOf(node.statuses)); got != "[applying applied]" {
				t.Errorf("reported states %s, want [applying applied]", got)
			}
			if want := strings.SplitN(tc.layout, ":", 2)[0]; node.labels[nodeagent.LabelMIGConfig] != want {
				t.Errorf("label %s=%q, want %q", nodeagent.LabelMIGConfig, node.labels[nodeagent.LabelMIGConfig], want)
			}
			d := b.Strategy(tc.strategy).Discover()
			uuids := map[string]bool{}
			for _, g := range d.GPUs {
				if got := fmt.Sprint(g.Instances); got != tc.want {
					t.Errorf("GPU %d reads back %s, want %s", g.Index, got, tc.want)
				}
				if g.MIGEnabled != (tc.want != "[]") {
					t.Errorf("GPU %d MIG enabled %t", g.Index, g.MIGEnabled)
				}
				for _, m := range g.MIG {
					if !strings.HasPrefix(m.UUID, "MIG-") || uuids[m.UUID] {
						t.Errorf("GPU %d %s: MIG UUID %q missing or repeated", g.Index, m.Instance, m.UUID)
					}
					uuids[m.UUID] = true
				}
			}
		})
	}
}

func TestMIGRelayoutReplacesInstances(t *testing.T) {
	b := mocknode.MakeNode(t).Layout("all-1g.5gb")
	b.Layout("all-3g.20gb")
	for _, g := range b.Discover().GPUs {
		if got := fmt.Sprint(g.Instances); got != "[3g.20gb@0 3g.20gb@4]" {
			t.Fatalf("GPU %d after re-layout: %s", g.Index, got)
		}
	}
}

func TestMIGLayoutsRefused(t *testing.T) {
	tests := []struct {
		name     string
		layout   string
		strategy devices.MIGStrategy
		pods     int
		// want is the final state; detail a fragment of its detail.
		want   nodeagent.MIGState
		detail string
	}{
		{"unknown profile", "all-2g.5gb", devices.MIGSingle, 0, nodeagent.MIGRejected, "no MIG profile"},
		{"two 4g do not fit", "custom:4g.20gb,4g.20gb", devices.MIGMixed, 0, nodeagent.MIGRejected, "no valid placement"},
		{"balanced needs mixed", "all-balanced", devices.MIGSingle, 0, nodeagent.MIGRejected, "use mixed"},
		{"unknown layout", "most-1g.5gb", devices.MIGSingle, 0, nodeagent.MIGRejected, "unknown MIG layout"},
		{"GPU pods still running", "all-1g.5gb", devices.MIGSingle, 3, nodeagent.MIGPending, "3 GPU pods"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			node := &fakeNode{}
			st, err := nodeagent.NewMIGManager(b.Server(), podCount(tc.pods), node, tc.strategy).Apply(context.Background(), tc.layout)
			if err != nil {
				t.Fatal(err)
			}
			if st.State != tc.want || !strings.Contains(st.Detail, tc.detail) {
				t.Fatalf("status %q, want %s containing %q", st.Annotation(), tc.want, tc.detail)
			}
			if got := fmt.Sprint(statesOf(node.statuses)); got != fmt.Sprintf("[%s]", tc.want) {
				t.Errorf("reported %s, want only %s (never applying)", got, tc.want)
			}
			for _, g := range b.Discover().GPUs {
				if g.MIGEnabled {
					t.Errorf("GPU %d: MIG was turned on by a refused layout", g.Index)
				}
			}
		})
	}
}

func statesOf(ss []nodeagent.MIGStatus) []nodeagent.MIGState {
	out := make([]nodeagent.MIGState, len(ss))
	for i, s := range ss {
		out[i] = s.State
	}
	return out
}

func TestMIGReconcile(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		// wantRun says whether Apply runs; wantState is then its final state.
		wantRun   bool
		wantState nodeagent.MIGState
	}{
		{"no trigger", map[string]string{}, false, ""},
		{"new layout", map[string]string{nodeagent.AnnotationMIGLayout: "all-3g.20gb"}, true, nodeagent.MIGApplied},
		{"already applied", map[string]string{nodeagent.AnnotationMIGLayout: "all-3g.20gb",
			nodeagent.AnnotationMIGState: "applied all-3g.20gb"}, false, ""},
		{"applied was another layout", map[string]string{nodeagent.AnnotationMIGLayout: "all-3g.20gb",
			nodeagent.AnnotationMIGState: "applied all-1g.5gb"}, true, nodeagent.MIGApplied},
		{"rejected stays rejected", map[string]string{nodeagent.AnnotationMIGLayout: "all-2g.5gb",
			nodeagent.AnnotationMIGState: "rejected all-2g.5gb: no such profile"}, false, ""},
		{"pending is retried", map[string]string{nodeagent.AnnotationMIGLayout: "all-3g.20gb",
			nodeagent.AnnotationMIGState: "pending all-3g.20gb: 1 GPU pods still run on the node"}, true, nodeagent.MIGApplied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			st, ran, err := nodeagent.NewMIGManager(b.Server(), podCount(0), &fakeNode{}, devices.MIGSingle).Reconcile(context.Background(), tc.annotations)
			if err != nil {
				t.Fatal(err)
			}
			if ran != tc.wantRun || st.State != tc.wantState {
				t.Errorf("ran %t state %q, want %t %q", ran, st.State, tc.wantRun, tc.wantState)
			}
		})
	}
}
