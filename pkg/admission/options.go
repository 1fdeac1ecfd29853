package admission

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// GPUAccounting converts one pod's GPU requests of every form (nvidia.com/gpu, MIG
// profiles, shared replicas, gantry.dev/gpu-milli) into the common unit, for the nodes of
// flavor. DefaultGPUAccounting is used when Options leave it nil.
type GPUAccounting func(pod resources.Vector, flavor *api.ResourceFlavor) (resources.MilliGPU, error)

// Options tune how Quota reads its input.
type Options struct {
	// GPUAccounting converts GPU requests into gantry.dev/gpu-milli for ClusterQueues
	// that set quota on it. Nil means DefaultGPUAccounting.
	GPUAccounting GPUAccounting
	// ExcludeResourcePrefixes lists resource-name prefixes that quota ignores (Kueue's
	// resources.excludeResourcePrefixes), e.g. "ephemeral-storage".
	ExcludeResourcePrefixes []string
	// FairSharing turns on Kueue's fair sharing: ClusterQueues of a cohort are ordered by
	// weighted dominant resource share and preempt each other by the share strategies.
	FairSharing FairSharingConfig
	// AdmissionPenalty is charged to a LocalQueue's admission fair sharing usage when one
	// of its workloads is admitted, as if it had run this long already, so one queue does
	// not take every admission between two Ticks (Kueue's entry penalty). 0 means 5m.
	AdmissionPenalty time.Duration
}

// FairStrategy is a fair-sharing preemption strategy (Kueue's names).
type FairStrategy string

const (
	// LessThanOrEqualToFinalShare: preempt from a ClusterQueue when the preemptor's
	// queue share, with the preemptor admitted, is at most the target's share after
	// losing the victim.
	LessThanOrEqualToFinalShare FairStrategy = "LessThanOrEqualToFinalShare"
	// LessThanInitialShare: preempt when the preemptor's queue share, with the
	// preemptor admitted, is below the target's share before losing the victim.
	LessThanInitialShare FairStrategy = "LessThanInitialShare"
)

// FairSharingConfig enables fair sharing; Strategies are tried in order (default:
// LessThanOrEqualToFinalShare, then LessThanInitialShare).
type FairSharingConfig struct {
	Enabled    bool
	Strategies []FairStrategy
}

// buildStructure validates the options and builds the shared structure.
func buildStructure(objs *api.Objects, opts Options) (*structure, error) {
	acct := opts.GPUAccounting
	if acct == nil {
		acct = DefaultGPUAccounting
	}
	s, err := newStructure(objs, acct)
	if err != nil {
		return nil, err
	}
	s.exclude = append([]string(nil), opts.ExcludeResourcePrefixes...)
	s.fair = opts.FairSharing
	if s.fair.Enabled && len(s.fair.Strategies) == 0 {
		s.fair.Strategies = []FairStrategy{LessThanOrEqualToFinalShare, LessThanInitialShare}
	}
	for i, st := range s.fair.Strategies {
		if st != LessThanOrEqualToFinalShare && st != LessThanInitialShare {
			return nil, fmt.Errorf("admission options: fairSharing.preemptionStrategies[%d]: unknown strategy %q (want %s or %s)", i, st, LessThanOrEqualToFinalShare, LessThanInitialShare)
		}
	}
	s.objs = *objs
	s.objs.ClusterQueues = append([]api.ClusterQueue(nil), objs.ClusterQueues...)
	s.opts = opts
	return s, nil
}
