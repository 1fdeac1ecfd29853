package nodeagent

import (
	"maps"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// pauseLabels are the deploy labels to set so the operands stop before a MIG change:
// every operand that is deployed ("true") gets migprotocol.OperandPaused. Operands another party
// set to "false" or never labelled are left alone.
func pauseLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, op := range migprotocol.Operands() {
		if key := migprotocol.LabelDeployPrefix + op; labels[key] == "true" {
			out[key] = migprotocol.OperandPaused
		}
	}
	return out
}

// resumeLabels are the deploy labels that bring paused operands back. The paused value
// is the memory of what was paused: it survives an agent restart and a node reboot, the
// way NVIDIA's MIG manager finds it after rebooting.
func resumeLabels(labels map[string]string) map[string]string {
	out := map[string]string{}
	for _, op := range migprotocol.Operands() {
		if key := migprotocol.LabelDeployPrefix + op; labels[key] == migprotocol.OperandPaused {
			out[key] = "true"
		}
	}
	return out
}

// withLabels is labels after set.
func withLabels(labels, set map[string]string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, set)
	return out
}
