//go:build cgo

package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// On an all-dynamic agent, carving and destroying a claim's instance (MIG mode turned on
// by the first carving included) is no layout change, so the agent keeps running; a
// switch to a fixed layout still restarts it, as does a change of a fixed layout's
// instances or a switch of a fixed agent to all-dynamic (with --dra only).
func TestNodeAgentRestartNeeded(t *testing.T) {
	dynamic := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed, Layout: devices.LayoutDynamic}
	fixed := devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGMixed}
	a, b := devices.Instance{Profile: "3g.20gb", Start: 4}, devices.Instance{Profile: "2g.10gb", Start: 0}
	tests := []struct {
		name    string
		layout  string // applied before the agent's discovery ("" leaves MIG off)
		sharing devices.Sharing
		// change acts on the GPUs after the discovery; config is the node's config then.
		change func(t *testing.T, w *mocknode.NodeWrapper)
		config string
		dra    bool
		want   bool
	}{
		{"dynamic: an instance carved", "all-enabled", dynamic, carve(0, a), migparted.Dynamic, true, false},
		{"dynamic: carved on GPUs with MIG off", "", dynamic, carve(0, a, b), migparted.Dynamic, true, false},
		{"dynamic: carved then destroyed", "all-enabled", dynamic, both(carve(0, a, b), destroy(0, a)), migparted.Dynamic, true, false},
		{"dynamic: a fixed layout applied", "all-enabled", dynamic, apply("all-balanced"), "all-balanced", true, true},
		{"fixed: nothing changed", "all-balanced", fixed, func(*testing.T, *mocknode.NodeWrapper) {}, "all-balanced", true, false},
		{"fixed: an instance destroyed", "all-balanced", fixed, destroy(0, devices.Instance{Profile: "3g.20gb", Start: 4}), "all-balanced", true, true},
		{"fixed: all-dynamic asked, with --dra", "all-enabled", fixed, apply(migparted.Dynamic), migparted.Dynamic, true, true},
		{"fixed: all-dynamic asked, without --dra", "all-enabled", fixed, apply(migparted.Dynamic), migparted.Dynamic, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := mocknode.MakeNode(t)
			if tc.layout != "" {
				w.Layout(tc.layout)
			}
			d, err := nodeagent.Discover(w.Server(), tc.sharing)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, w)
			if got := restartNeeded(w.Server(), d, tc.sharing, tc.config, tc.dra); got != tc.want {
				t.Errorf("restartNeeded = %t, want %t", got, tc.want)
			}
			if tc.sharing.DynamicMIG() && tc.config == migparted.Dynamic && layoutChanged(w.Server(), d, tc.sharing) {
				t.Errorf("layoutChanged reports claims' carvings as a layout change")
			}
		})
	}
}

func carve(gpu int, ins ...devices.Instance) func(*testing.T, *mocknode.NodeWrapper) {
	return func(t *testing.T, w *mocknode.NodeWrapper) {
		m, err := devices.LookupModel("A100-SXM4-40GB")
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range ins {
			if _, err := nodeagent.CreateMIGDevice(w.Server(), m, gpu, in); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func destroy(gpu int, in devices.Instance) func(*testing.T, *mocknode.NodeWrapper) {
	return func(t *testing.T, w *mocknode.NodeWrapper) {
		if err := nodeagent.DestroyMIGDevice(w.Server(), gpu, in); err != nil {
			t.Fatal(err)
		}
	}
}

func apply(config string) func(*testing.T, *mocknode.NodeWrapper) {
	return func(t *testing.T, w *mocknode.NodeWrapper) { w.Layout(config) }
}

func both(fs ...func(*testing.T, *mocknode.NodeWrapper)) func(*testing.T, *mocknode.NodeWrapper) {
	return func(t *testing.T, w *mocknode.NodeWrapper) {
		for _, f := range fs {
			f(t, w)
		}
	}
}

// The node's nvidia.com/mig.config label picks the sharing the serving agent starts
// with: all-dynamic needs --dra, and without it the agent says so and keeps the flags'.
func TestNodeAgentStartSharing(t *testing.T) {
	flags := devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4, MIGStrategy: devices.MIGMixed}
	tests := []struct {
		name        string
		config      string
		dra         bool
		wantDynamic bool
		wantWarning string
	}{
		{"all-dynamic with --dra", migparted.Dynamic, true, true, ""},
		{"all-dynamic without --dra", migparted.Dynamic, false, false, "run it with --dra"},
		{"a fixed layout", "all-balanced", true, false, ""},
		{"no label", "", true, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w bytes.Buffer
			got := startSharing(&w, flags, map[string]string{migprotocol.LabelConfig: tc.config}, tc.dra)
			if got.DynamicMIG() != tc.wantDynamic {
				t.Errorf("sharing %+v: dynamic %t, want %t", got, got.DynamicMIG(), tc.wantDynamic)
			}
			if tc.wantDynamic && (got.Replicas != 0 || got.MIGStrategy != devices.MIGMixed) {
				t.Errorf("dynamic sharing %+v keeps time-slicing or loses the MIG strategy", got)
			}
			if !tc.wantDynamic && got.Mode != flags.Mode {
				t.Errorf("sharing %+v, want the flags' %+v", got, flags)
			}
			if !strings.Contains(w.String(), tc.wantWarning) || (tc.wantWarning == "" && w.Len() > 0) {
				t.Errorf("warning %q, want %q", w.String(), tc.wantWarning)
			}
		})
	}
}
