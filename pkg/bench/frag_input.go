package bench

import (
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// FragInput is what CheckFragInput found in a trace. Pods that fit no node of the empty
// cluster still arrive in every run and count as unallocated, as in the paper's protocol
// (they are part of the workload that arrived): they are reported here so that a reader
// sees them, never dropped from the denominator.
type FragInput struct {
	// NeverFit counts the list's pods that no node can hold even empty (too many GPUs,
	// too much cpu or memory, or only absent GPU models), with their GPU demand and up
	// to maxExamples of their names.
	NeverFit      int                `json:"neverFitPods"`
	NeverFitGPU   resources.MilliGPU `json:"neverFitGPU"`
	NeverFitNames []string           `json:"neverFitExamples,omitempty"`
	// AbsentModels are the GPU models pods name (gpu_spec) that no node has, and
	// AbsentModelPods how many pods name one of them.
	AbsentModels    []string `json:"absentModels,omitempty"`
	AbsentModelPods int      `json:"podsNamingAbsentModels"`
}

// maxExamples bounds the pod names a FragInput lists.
const maxExamples = 5

// CheckFragInput finds the pods of the list that fit no node of the empty cluster and
// the GPU models pods name that no node has.
func CheckFragInput(nodes []api.NodePool, pods []FragPod) (FragInput, error) {
	var in FragInput
	have := map[string]bool{}
	for _, p := range nodes {
		if m := p.NodeLabels[trace.LabelTraceGPUModel]; m != "" {
			have[m] = true
		}
	}
	for _, p := range pods {
		absent := false
		for _, m := range p.Models {
			if !have[m] {
				absent = true
				if !slices.Contains(in.AbsentModels, m) {
					in.AbsentModels = append(in.AbsentModels, m)
				}
			}
		}
		if absent {
			in.AbsentModelPods++
		}
	}
	slices.Sort(in.AbsentModels)
	st, err := newFragState(nodes, pods)
	if err != nil {
		return FragInput{}, err
	}
	// Any policy tells whether a node fits; its verdicts are kept per pod shape.
	pol, err := placement.NewPolicy(placement.PolicyBestFit, st.shapes)
	if err != nil {
		return FragInput{}, err
	}
	for _, p := range pods {
		req := st.reqs[p.Name]
		if req == nil {
			return FragInput{}, fmt.Errorf("pod %s: no request prepared", p.Name)
		}
		if _, ok := pol.Choose(st.ov, req, nil); ok {
			continue
		}
		in.NeverFit++
		in.NeverFitGPU += p.GPU
		if len(in.NeverFitNames) < maxExamples {
			in.NeverFitNames = append(in.NeverFitNames, p.Name)
		}
	}
	return in, nil
}

// String summarises the findings in one line ("" when there are none).
func (in FragInput) String() string {
	var out string
	if in.NeverFit > 0 {
		out = fmt.Sprintf("%d pods fit no node even empty (%s GPUs of demand, e.g. %v); they arrive and count as unallocated",
			in.NeverFit, report.FormatMilli(in.NeverFitGPU), in.NeverFitNames)
	}
	if len(in.AbsentModels) > 0 {
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("%d pods name GPU models no node has: %v", in.AbsentModelPods, in.AbsentModels)
	}
	return out
}
