package cli

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/manifest"
)

// NeverFit is the engine's finding with the job object it is about, for validate's
// messages.
type NeverFit struct {
	engine.NeverFit
	// Kind is the job object's kind (Job, PyTorchJob, ...).
	Kind   string
	Source api.Source
}

// String renders the finding on one line for validate's text output.
func (n NeverFit) String() string {
	return fmt.Sprintf("%s: workload %s: pod set %s: %s", n.Source, n.Workload, n.PodSet, n.Detail())
}

// NeverFits lists the workloads of objs that cannot be placed even on the empty cluster
// the objects describe (engine.NeverFits), with their sources.
func NeverFits(objs *api.Objects) ([]NeverFit, error) {
	found, err := engine.NeverFits(objs)
	if err != nil {
		return nil, err
	}
	byID := make(map[api.WorkloadID]*api.Workload, len(objs.Workloads))
	for i := range objs.Workloads {
		byID[objs.Workloads[i].ID()] = &objs.Workloads[i]
	}
	out := make([]NeverFit, len(found))
	for i, nf := range found {
		w := byID[nf.Workload]
		out[i] = NeverFit{NeverFit: nf, Kind: w.Owner.Kind, Source: w.Source}
	}
	return out, nil
}

// problem is the finding as a validation problem on the job object.
func (n NeverFit) problem() *manifest.Error {
	kind := n.Kind
	if kind == "" {
		kind = "Workload"
	}
	return &manifest.Error{Source: n.Source, Kind: kind, Name: string(n.Workload), Field: "pod set " + n.PodSet,
		Msg: "can never run on this cluster: " + n.Detail()}
}
