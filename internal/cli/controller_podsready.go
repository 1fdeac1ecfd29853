package cli

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// podsReadyConfig is the controller's waitForPodsReady: the --kueue-config file's
// (read by the loader simulate uses, so one Configuration means the same on a cluster
// and in a simulation) with the --pods-ready-* and --requeue-backoff-* flags given
// over it; nil when neither enables it.
func (f *controllerFlags) podsReadyConfig() (*api.WaitForPodsReady, error) {
	if f.kueueConfig != "" {
		objs, err := manifest.Load([]string{f.kueueConfig}, nil)
		if err != nil {
			return nil, fmt.Errorf("--kueue-config %s: %w", f.kueueConfig, err)
		}
		f.podsReady.fromFile = objs.PodsReady
	}
	r := f.requeue
	opts, err := f.podsReady.options(requeueBackoff{fl: f.podsReady.fl, base: r.BackoffBase, max: r.BackoffMax, limit: r.BackoffLimit})
	if err != nil {
		return nil, err
	}
	return opts.Config, nil
}
