package nodeagent_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// testConfig is a mig-parted file for the DGX A100 mock (PCI ID 0x20B010DE).
const testConfig = `version: v1
mig-configs:
  half:
    - devices: [0, 1, 2, 3]
      mig-enabled: true
      mig-devices: {"3g.20gb": 2}
  last-one-off:
    - devices: all
      mig-enabled: true
      mig-devices: {"1g.5gb": 7}
    - device-filter: "0x20B010DE"
      devices: [7]
      mig-enabled: false
  other-model:
    - device-filter: ["0x233010DE"]
      devices: all
      mig-enabled: true
      mig-devices: {"1g.10gb": 7}
  two-4g:
    - devices: all
      mig-enabled: true
      mig-devices: {"4g.20gb": 2}
  me-of-80gb:
    - devices: all
      mig-enabled: true
      mig-devices: {"1g.10gb.me": 1}
`

func loadString(file, text string) func() (*migparted.Spec, error) {
	return func() (*migparted.Spec, error) { return migparted.Parse(file, []byte(text)) }
}

// operandLabels is a GPU Operator node: three operands deployed, one switched off by
// its owner, one never labelled.
func operandLabels(config string) map[string]string {
	return map[string]string{
		migprotocol.LabelConfig:                                 config,
		migprotocol.LabelDeployPrefix + "device-plugin":         "true",
		migprotocol.LabelDeployPrefix + "gpu-feature-discovery": "true",
		migprotocol.LabelDeployPrefix + "nvsm":                  "true",
		migprotocol.LabelDeployPrefix + "dcgm-exporter":         "false",
	}
}

func instancesByGPU(b *mocknode.NodeWrapper) []string {
	var out []string
	for _, g := range b.Discover().GPUs {
		if !g.MIGEnabled {
			out = append(out, "off")
			continue
		}
		out = append(out, fmt.Sprint(g.Instances))
	}
	return out
}

func TestMIGConfigsAppliedAndReadBack(t *testing.T) {
	const seven1g = "[1g.5gb@0 1g.5gb@1 1g.5gb@2 1g.5gb@3 1g.5gb@4 1g.5gb@5 1g.5gb@6]"
	tests := []struct {
		config, file string
		// want is each GPU as read back: "off" or its instances; "*" repeats the last.
		want []string
	}{
		{"all-1g.5gb", "", []string{seven1g, "*"}},
		{"all-3g.20gb", "", []string{"[3g.20gb@0 3g.20gb@4]", "*"}},
		{"all-7g.40gb", "", []string{"[7g.40gb@0]", "*"}},
		{"all-balanced", "", []string{"[2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4]", "*"}},
		{"all-enabled", "", []string{"[]", "*"}},
		{"all-disabled", "", []string{"off", "*"}},
		{"half", testConfig, []string{"[3g.20gb@0 3g.20gb@4]", "[3g.20gb@0 3g.20gb@4]", "[3g.20gb@0 3g.20gb@4]", "[3g.20gb@0 3g.20gb@4]", "off", "*"}},
		{"last-one-off", testConfig, []string{seven1g, seven1g, seven1g, seven1g, seven1g, seven1g, seven1g, "off"}},
	}
	for _, tc := range tests {
		t.Run(tc.config, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			node := newMIGNode(operandLabels(tc.config))
			opts := nodeagent.MIGOptions{}
			if tc.file != "" {
				opts.Load = loadString("test.yaml", tc.file)
			}
			st, err := nodeagent.NewMIGManager(b.Server(), podCount(0), node, opts).Reconcile(context.Background())
			if err != nil || st.State != migprotocol.Success {
				t.Fatalf("Reconcile: %v %s", err, st.Annotation())
			}
			got := instancesByGPU(b)
			for i := range got {
				w := tc.want[min(i, len(tc.want)-1)]
				if w == "*" {
					w = tc.want[len(tc.want)-2]
				}
				if got[i] != w {
					t.Errorf("GPU %d reads back %s, want %s", i, got[i], w)
				}
			}
		})
	}
}

// step is one Reconcile of a scenario and what it must leave.
type step struct {
	pods int
	// reset resets GPU 0 before the step, as a reboot would.
	reset  bool
	state  migprotocol.State
	detail string
	// paused says whether the deployed operands are paused after the step.
	paused bool
}

func TestMIGStateMachine(t *testing.T) {
	tests := []struct {
		name, config, file string
		passive            bool
		reboot             bool
		// requireReset makes MIG mode changes on GPU 0 wait for a reset.
		requireReset bool
		steps        []step
		// wantGPU0 is GPU 0 read back at the end; wantStates every state reported.
		wantGPU0   string
		wantStates string
		wantBoots  int
	}{
		{name: "pause, apply, resume", config: "all-3g.20gb",
			steps:    []step{{state: migprotocol.Success}},
			wantGPU0: "[3g.20gb@0 3g.20gb@4]", wantStates: "[pending pending success]"},
		{name: "waits for GPU pods with operands paused", config: "all-3g.20gb",
			steps: []step{
				{pods: 2, state: migprotocol.Pending, detail: "2 GPU pods still run", paused: true},
				{pods: 1, state: migprotocol.Pending, detail: "1 GPU pods still run", paused: true},
				{pods: 0, state: migprotocol.Success},
			},
			wantGPU0: "[3g.20gb@0 3g.20gb@4]", wantStates: "[pending pending pending pending success]"},
		{name: "already applied writes nothing more", config: "all-disabled",
			steps:    []step{{state: migprotocol.Success}, {state: migprotocol.Success}},
			wantGPU0: "off", wantStates: "[success]"},
		{name: "unknown config name", config: "all-9g.99gb",
			steps:    []step{{state: migprotocol.Failed, detail: `no config "all-9g.99gb"`}},
			wantGPU0: "off", wantStates: "[failed]"},
		{name: "malformed file", config: "half", file: "version: v1\nmig-configs:\n  half:\n    - devices: all\n",
			steps:    []step{{state: migprotocol.Failed, detail: `test.yaml:4: config "half", entry 0, field mig-enabled: missing`}},
			wantGPU0: "off", wantStates: "[failed]"},
		{name: "layout breaks the placement rules", config: "two-4g", file: testConfig,
			steps:    []step{{state: migprotocol.Failed, detail: `config "two-4g", entry 0, field mig-devices: GPU 0: `}},
			wantGPU0: "off", wantStates: "[failed]"},
		{name: "profile the model lacks", config: "me-of-80gb", file: testConfig,
			steps:    []step{{state: migprotocol.Failed, detail: `field mig-devices["1g.10gb.me"]: GPU 0 (A100-SXM4-40GB) has no MIG profile`}},
			wantGPU0: "off", wantStates: "[failed]"},
		{name: "config for other GPUs", config: "other-model", file: testConfig,
			steps:    []step{{state: migprotocol.Failed, detail: `config "other-model": selects none of the node's GPUs`}},
			wantGPU0: "off", wantStates: "[failed]"},
		{name: "a failed config is not retried", config: "two-4g", file: testConfig,
			steps:    []step{{state: migprotocol.Failed}, {state: migprotocol.Failed, detail: "unchanged since it failed"}},
			wantGPU0: "off", wantStates: "[failed]"},
		{name: "reset required, no reboot allowed", config: "all-3g.20gb", requireReset: true,
			steps:    []step{{state: migprotocol.Failed, detail: "the agent does not reboot nodes"}},
			wantGPU0: "off", wantStates: "[pending pending failed]"},
		{name: "reset required, reboot, success after it", config: "all-3g.20gb", requireReset: true, reboot: true,
			steps: []step{
				{state: migprotocol.Rebooting, detail: "GPU 0", paused: true},
				{reset: true, state: migprotocol.Success},
			},
			wantGPU0: "[3g.20gb@0 3g.20gb@4]", wantStates: "[pending pending rebooting pending pending success]", wantBoots: 1},
		{name: "reset required, reboot did not help", config: "all-3g.20gb", requireReset: true, reboot: true,
			steps: []step{
				{state: migprotocol.Rebooting, paused: true},
				{state: migprotocol.Failed, detail: "did not take effect after rebooting"},
			},
			wantGPU0: "off", wantStates: "[pending pending rebooting pending pending failed]", wantBoots: 1},
		{name: "passive only reads", config: "all-3g.20gb", passive: true,
			steps:    []step{{state: ""}},
			wantGPU0: "off", wantStates: "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := mocknode.MakeNode(t)
			if tc.requireReset {
				b.Server().RequireReset(0)
			}
			node := newMIGNode(operandLabels(tc.config))
			boots := &rebooter{}
			opts := nodeagent.MIGOptions{Passive: tc.passive}
			if tc.reboot {
				opts.Reboot = boots
			}
			if tc.file != "" {
				opts.Load = loadString("test.yaml", tc.file)
			}
			pods := &podCounts{}
			mgr := nodeagent.NewMIGManager(b.Server(), pods, node, opts)
			for i, s := range tc.steps {
				if s.reset {
					b.Server().ResetGPU(0)
				}
				pods.counts = []int{s.pods}
				st, err := mgr.Reconcile(context.Background())
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if st.State != s.state || !strings.Contains(st.Detail, s.detail) || node.label(migprotocol.LabelConfigState) != string(s.state) {
					t.Fatalf("step %d: status %q, label %q; want %s with %q", i, st.Annotation(), node.label(migprotocol.LabelConfigState), s.state, s.detail)
				}
				checkOperands(t, i, node, s.paused)
			}
			if got := instancesByGPU(b)[0]; got != tc.wantGPU0 {
				t.Errorf("GPU 0 reads back %s, want %s", got, tc.wantGPU0)
			}
			if got := fmt.Sprint(node.states); got != tc.wantStates {
				t.Errorf("reported states %s, want %s", got, tc.wantStates)
			}
			if boots.calls != tc.wantBoots {
				t.Errorf("rebooted %d times, want %d", boots.calls, tc.wantBoots)
			}
			checkNeverWritesConfig(t, node, tc.passive)
		})
	}
}

// checkOperands: deployed operands paused or back to true; the one set to false and the
// unlabelled one never touched.
func checkOperands(t *testing.T, step int, node *migNode, paused bool) {
	t.Helper()
	want := "true"
	if paused {
		want = migprotocol.OperandPaused
	}
	for _, op := range []string{"device-plugin", "gpu-feature-discovery", "nvsm"} {
		if got := node.label(migprotocol.LabelDeployPrefix + op); got != want {
			t.Errorf("step %d: operand %s is %q, want %q", step, op, got, want)
		}
	}
	if got := node.label(migprotocol.LabelDeployPrefix + "dcgm-exporter"); got != "false" {
		t.Errorf("step %d: dcgm-exporter (switched off by its owner) is %q", step, got)
	}
	if got, ok := node.labels[migprotocol.LabelDeployPrefix+"dcgm"]; ok {
		t.Errorf("step %d: unlabelled operand dcgm got %q", step, got)
	}
}

// checkNeverWritesConfig: the manager never writes the desired-config label (its owner
// is whoever asks for a layout); a passive manager writes nothing at all.
func checkNeverWritesConfig(t *testing.T, node *migNode, passive bool) {
	t.Helper()
	for _, w := range node.labelWrites {
		if _, ok := w[migprotocol.LabelConfig]; ok {
			t.Errorf("the manager wrote %s: %v", migprotocol.LabelConfig, w)
		}
	}
	if passive && (len(node.labelWrites) > 0 || len(node.states) > 0) {
		t.Errorf("a passive manager wrote labels %v and states %v", node.labelWrites, node.states)
	}
}

// TestMIGOperandsPausedBeforeGPUsChange: the pause is written before any GPU changes and
// the resume after the last, so no operand sees a half-made layout.
func TestMIGOperandsPausedBeforeGPUsChange(t *testing.T) {
	b := mocknode.MakeNode(t)
	node := newMIGNode(operandLabels("all-1g.5gb"))
	seen := &probe{b: b, node: node}
	if _, err := nodeagent.NewMIGManager(b.Server(), seen, node, nodeagent.MIGOptions{}).Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if seen.pausedAtCount != migprotocol.OperandPaused || seen.migAtCount != "off" {
		t.Errorf("when GPU pods were counted: device plugin %q, GPU 0 %s; want paused and untouched", seen.pausedAtCount, seen.migAtCount)
	}
	if len(node.labelWrites) != 2 || !maps.Equal(node.labelWrites[1], map[string]string{
		migprotocol.LabelDeployPrefix + "device-plugin": "true", migprotocol.LabelDeployPrefix + "gpu-feature-discovery": "true", migprotocol.LabelDeployPrefix + "nvsm": "true",
	}) {
		t.Errorf("label writes %v, want a pause then one resume of the three deployed operands", node.labelWrites)
	}
}

// probe is a GPUPodCounter that records the node and GPUs when asked.
type probe struct {
	b                         *mocknode.NodeWrapper
	node                      *migNode
	pausedAtCount, migAtCount string
}

func (p *probe) GPUPods(context.Context) (int, error) {
	p.migAtCount = instancesByGPU(p.b)[0]
	p.pausedAtCount = p.node.label(migprotocol.LabelDeployPrefix + "device-plugin")
	return 0, nil
}
