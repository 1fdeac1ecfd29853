package cli

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
)

// liveCounts says what a cluster dump's pods became (api.Objects.Live): pods that run at
// t=0 as slots of queued workloads, pods that only use capacity, finished pods skipped.
type liveCounts struct {
	Running, Workloads, Capacity, Finished int
}

func countLive(o *api.Objects) liveCounts {
	c := liveCounts{Finished: o.Live.Finished}
	wls := map[api.WorkloadID]bool{}
	for _, p := range o.Live.Pods {
		if p.Workload == "" {
			c.Capacity++
			continue
		}
		c.Running++
		wls[p.Workload] = true
	}
	c.Workloads = len(wls)
	return c
}

// liveLine is the one-line summary of a cluster dump's pods; ok is false when the input
// has none.
func liveLine(o *api.Objects) (string, bool) {
	c := countLive(o)
	if c.Running+c.Capacity+c.Finished == 0 {
		return "", false
	}
	return fmt.Sprintf("cluster dump: %d pods of %d queued workloads run at t=0 where they are, %d pods without a queue use capacity on their nodes, %d finished pods skipped",
		c.Running, c.Workloads, c.Capacity, c.Finished), true
}
