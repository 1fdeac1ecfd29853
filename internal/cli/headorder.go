package cli

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/engine"
)

const headOrderHelp = "order a cycle tries pending workloads in: priority (preemptors, then priority, ClusterQueue share, queue time), " +
	"or kueue (Kueue's cycle: before priority, quota from nearer first, as Kueue orders its heads, and the quota Kueue holds " +
	"in a cycle for preemptors and for queue heads that cannot reclaim; docs/admission.md)"

// parseHeadOrder reads --head-order ("" is the default, as flags set in code leave it).
func parseHeadOrder(s string) (engine.HeadOrder, error) {
	switch o := engine.HeadOrder(s); o {
	case "":
		return engine.HeadOrderPriority, nil
	case engine.HeadOrderPriority, engine.HeadOrderKueue:
		return o, nil
	}
	return "", fmt.Errorf("--head-order %q: want %q or %q", s, engine.HeadOrderPriority, engine.HeadOrderKueue)
}
