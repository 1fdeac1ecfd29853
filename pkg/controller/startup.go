package controller

import (
	"context"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
)

// catchUp makes the cache at least as new as one consistent read of the Workloads: an
// informer's first list may be served from the API server's watch cache, a little
// behind, and a new leader must see every admission the last one wrote before it
// places anything. Newer versions than the informer's are assumed until it catches up.
// It retries until the read succeeds; false when ctx ended first.
func (ctl *Controller) catchUp(ctx context.Context) bool {
	for {
		var list v1alpha1.WorkloadList
		err := ctl.direct.List(ctx, &list)
		if err == nil {
			for i := range list.Items {
				ctl.cache.assume(&list.Items[i])
			}
			return true
		}
		ctl.log.Error(err, "list workloads")
		if !sleepCtx(ctx, ctl.opts.RetryAfter) {
			return false
		}
	}
}
