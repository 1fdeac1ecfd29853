package plan

import "github.com/gantry-sched/gantry/pkg/api"

// Committer applies a plan to a cluster. Implementations re-check every admission and
// binding against the current state (which may have changed since the cycle's snapshot)
// and apply each workload's part atomically: all of its bindings or none. A device is
// never bound twice.
//
// The returned error is for a plan that is malformed (Validate fails) or a committer
// that cannot work at all; refused parts are values in Result.
type Committer interface {
	Apply(p Plan) (Result, error)
}

// Result says which workloads of a plan were applied and which were refused.
type Result struct {
	Applied []api.WorkloadID
	Refused []Conflict
}

// Conflict is a workload whose part of the plan no longer fits the current state.
type Conflict struct {
	Workload api.WorkloadID
	Node     string
	Reason   string
}

// CommitterFunc adapts a function to Committer.
type CommitterFunc func(Plan) (Result, error)

// Apply calls f.
func (f CommitterFunc) Apply(p Plan) (Result, error) { return f(p) }

var _ Committer = CommitterFunc(nil)
