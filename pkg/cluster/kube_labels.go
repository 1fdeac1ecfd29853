package cluster

import (
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// operatorLabelValues are the values the GPU Operator (GPU Feature Discovery, the
// device plugin, the MIG manager) writes for the labels Gantry reads as words. A value
// outside them comes from a newer operator or a hand edit: reading it as the default
// would model the node wrongly, so it is refused with the values Gantry knows.
// In a fixed order, so the first bad label reported is the same on every run.
func operatorLabelValues() []operatorLabel {
	return []operatorLabel{
		{devices.LabelMIGStrategy, []string{"none", "single", "mixed"}},
		{devices.LabelSharingStrategy, []string{"none", "time-slicing", "mps"}},
		{devices.LabelMIGCapable, []string{"true", "false"}},
		{devices.LabelGPUSharing, []string{"fractional"}},
	}
}

type operatorLabel struct {
	key     string
	allowed []string
}

// checkOperatorLabels refuses unknown values of the GPU Operator labels Gantry reads,
// naming the label; nvidia.com/gpu.replicas must be a whole number.
func (n *Node) checkOperatorLabels() error {
	for _, l := range operatorLabelValues() {
		v, has := n.Labels[l.key]
		if !has || containsFold(l.allowed, v) {
			continue
		}
		return n.errf("metadata.labels["+l.key+"]", "unknown value %q (from a newer GPU Operator?): Gantry knows %s", v, strings.Join(l.allowed, ", "))
	}
	if v, has := n.Labels[devices.LabelGPUReplicas]; has {
		if r, err := strconv.Atoi(v); err != nil || r < 0 {
			return n.errf("metadata.labels["+devices.LabelGPUReplicas+"]", "%q: want a whole number of replicas", v)
		}
	}
	return nil
}

func containsFold(list []string, v string) bool {
	for _, s := range list {
		if strings.EqualFold(s, v) {
			return true
		}
	}
	return false
}
