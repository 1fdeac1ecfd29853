package nodeagent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// nvidia.com/mig.config=all-dynamic: the MIG manager applies no layout. On an agent that
// already runs all-dynamic (Carving) it only turns MIG mode on and never destroys a
// claim's carving; coming from a fixed layout it clears that layout (draining first, as
// for any change); without the DRA plugin it refuses the config, touching nothing.
func TestMIGManagerAllDynamic(t *testing.T) {
	carving := devices.Instance{Profile: "3g.20gb", Start: 4}
	tests := []struct {
		name string
		// layout is applied first ("" leaves MIG off); carve carves on GPU 0 as the DRA
		// plugin would, afterwards.
		layout string
		carve  bool
		opts   nodeagent.MIGOptions
		steps  []step
		// wantGPU is each of GPU 0 and GPU 1 read back at the end.
		wantGPU    [2]string
		wantStates string
		// wantPaused says whether the operands were paused at any point.
		wantPaused bool
	}{
		{name: "carvings kept, MIG already on: nothing written but success",
			layout: "all-enabled", carve: true, opts: nodeagent.MIGOptions{DRA: true, Carving: true},
			steps:   []step{{pods: 3, state: migprotocol.Success}, {pods: 3, state: migprotocol.Success}},
			wantGPU: [2]string{"[3g.20gb@4]", "[]"}, wantStates: "[success]"},
		{name: "MIG mode left to the DRA plugin: GPU 1 stays off, the carving on GPU 0 kept",
			carve: true, opts: nodeagent.MIGOptions{DRA: true, Carving: true},
			steps:   []step{{pods: 1, state: migprotocol.Success}},
			wantGPU: [2]string{"[3g.20gb@4]", "off"}, wantStates: "[success]"},
		{name: "from a fixed layout: drained, its instances cleared",
			layout: "all-balanced", opts: nodeagent.MIGOptions{DRA: true},
			steps: []step{
				{pods: 2, state: migprotocol.Pending, paused: true},
				{pods: 0, state: migprotocol.Success},
			},
			wantGPU: [2]string{"[]", "[]"}, wantStates: "[pending pending pending success]", wantPaused: true},
		{name: "without the DRA plugin: refused, nothing touched, not retried",
			layout: "all-balanced", opts: nodeagent.MIGOptions{},
			steps: []step{
				{state: migprotocol.Failed, detail: "does not serve the DRA kubelet plugin (--dra)"},
				{state: migprotocol.Failed, detail: "unchanged since it failed"},
			},
			wantGPU:    [2]string{"[2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4]", "[2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4]"},
			wantStates: "[failed]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			if tc.layout != "" {
				b.Layout(tc.layout)
			}
			if tc.carve {
				carveOn(t, b, 0, carving)
			}
			node := newMIGNode(operandLabels(migparted.Dynamic))
			pods := &podCounts{}
			mgr := nodeagent.NewMIGManager(b.Server(), pods, node, tc.opts)
			paused := false
			for i, s := range tc.steps {
				pods.counts = []int{s.pods}
				st, err := mgr.Reconcile(context.Background())
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if st.State != s.state || !strings.Contains(st.Detail, s.detail) {
					t.Fatalf("step %d: status %q; want %s with %q", i, st.Annotation(), s.state, s.detail)
				}
				checkOperands(t, i, node, s.paused)
				paused = paused || s.paused
			}
			got := instancesByGPU(b)
			if [2]string{got[0], got[1]} != tc.wantGPU {
				t.Errorf("GPUs 0 and 1 read back %s and %s, want %s and %s", got[0], got[1], tc.wantGPU[0], tc.wantGPU[1])
			}
			if s := fmt.Sprint(node.states); s != tc.wantStates {
				t.Errorf("reported states %s, want %s", s, tc.wantStates)
			}
			if !tc.wantPaused && len(node.labelWrites) > 0 {
				t.Errorf("operand labels written %v; want none", node.labelWrites)
			}
			checkNeverWritesConfig(t, node, false)
		})
	}
}

// A fixed layout asked for on an all-dynamic agent replaces the carvings like any
// layout: Carving protects them under all-dynamic only.
func TestMIGManagerFixedLayoutOnCarvingAgent(t *testing.T) {
	b := mocknode.MakeNode(t).Layout("all-enabled")
	carveOn(t, b, 0, devices.Instance{Profile: "3g.20gb", Start: 4})
	node := newMIGNode(operandLabels("all-1g.5gb"))
	st, err := nodeagent.NewMIGManager(b.Server(), podCount(0), node, nodeagent.MIGOptions{DRA: true, Carving: true}).Reconcile(context.Background())
	if err != nil || st.State != migprotocol.Success {
		t.Fatalf("Reconcile: %v %s", err, st.Annotation())
	}
	if got := instancesByGPU(b)[0]; got != "[1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6]" {
		t.Errorf("GPU 0 reads back %s, want seven 1g.5gb", got)
	}
}

// carveOn carves in on GPU gpu as the DRA plugin does when it prepares a claim.
func carveOn(t *testing.T, b *mocknode.NodeWrapper, gpu int, in devices.Instance) {
	t.Helper()
	m, err := devices.LookupModel("A100-SXM4-40GB")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nodeagent.CreateMIGDevice(b.Server(), m, gpu, in); err != nil {
		t.Fatal(err)
	}
}

// A dynamic GPU given whole to a claim has MIG off (the DRA plugin turned it off): the MIG
// manager of an all-dynamic agent leaves it so, pausing no operand.
func TestMIGManagerLeavesAWholeDynamicGPU(t *testing.T) {
	b := mocknode.MakeNode(t)
	b.Layout("all-enabled")
	node := newMIGNode(operandLabels(migparted.Dynamic))
	pods := &podCounts{counts: []int{1}}
	mgr := nodeagent.NewMIGManager(b.Server(), pods, node, nodeagent.MIGOptions{DRA: true, Carving: true})
	if st, err := mgr.Reconcile(context.Background()); err != nil || st.State != migprotocol.Success {
		t.Fatalf("first reconcile: %v %v", st.Annotation(), err)
	}
	if err := nodeagent.UseWholeGPU(b.Server(), 0); err != nil {
		t.Fatal(err)
	}
	st, err := mgr.Reconcile(context.Background())
	if err != nil || st.State != migprotocol.Success {
		t.Fatalf("reconcile after the whole GPU: %v %v", st.Annotation(), err)
	}
	checkOperands(t, 1, node, false)
	if got := instancesByGPU(b); got[0] != "off" || got[1] != "[]" {
		t.Errorf("GPUs 0 and 1 read back %s and %s, want off and []", got[0], got[1])
	}
}
