package dashboard

import (
	"strconv"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// formatGPU writes milli-GPU as GPUs with at most three decimals and no trailing zeros:
// 8000 -> "8", 2500 -> "2.5", 142 -> "0.142".
func formatGPU(m resources.MilliGPU) string {
	neg := m < 0
	if neg {
		m = -m
	}
	s := strconv.FormatInt(int64(m/resources.MilliPerGPU), 10)
	if frac := int64(m % resources.MilliPerGPU); frac != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(1000+frac, 10)[1:], "0")
	}
	if neg {
		return "-" + s
	}
	return s
}

// formatDuration writes a duration as the simulator's reports do (90s -> "1m30s").
func formatDuration(d time.Duration) string { return sim.FormatDuration(sim.Seconds(d)) }

// formatAmount writes a quota amount of resource n for people: GPU-milli as GPUs, bytes
// in their largest binary unit, the rest as Kubernetes writes them.
func formatAmount(n resources.Name, a resources.Amount) string {
	if n == resources.GPUMilli {
		return formatGPU(resources.MilliGPU(a))
	}
	return resources.FormatReadable(n, a)
}

// percentOf is a*100/b as an integer between 0 and 100 (0 when b is 0), for bar widths.
func percentOf(a, b int64) int64 {
	if b <= 0 || a <= 0 {
		return 0
	}
	return min(a*100/b, 100)
}
