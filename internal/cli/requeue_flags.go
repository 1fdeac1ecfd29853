package cli

import (
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/spf13/pflag"
)

// requeueFlags registers the requeue backoff of workloads evicted by failures (Kueue's
// waitForPodsReady.requeuingStrategy), shared by simulate and controller so both run
// the same policy. Off by default, as in Kueue.
func requeueFlags(fl *pflag.FlagSet, p *engine.RequeuePolicy) {
	fl.DurationVar(&p.BackoffBase, "requeue-backoff-base", 0, "wait after a workload's first eviction by a node or device failure, doubled with each failure (0: requeue at once)")
	fl.DurationVar(&p.BackoffMax, "requeue-backoff-max", 0, "longest requeue backoff (0: no cap)")
	fl.IntVar(&p.BackoffLimit, "requeue-backoff-limit", 0, "failures after which a workload is not retried until it changes (0: no limit)")
}
