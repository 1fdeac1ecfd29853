package manifest

import (
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Annotations of a ClusterQueue that carry Gantry's extensions to Kueue's schema, so the
// same object still loads into Kueue unchanged.
const (
	// AnnotationPlacementScorers: comma-separated "name=weight" pairs, e.g.
	// "binpack=2,fragmentation=1" (names: binpack, spread, fragmentation, whole-gpu-islands).
	AnnotationPlacementScorers = "gantry.dev/placement-scorers"
	// AnnotationDisruptionBudgetGPUs caps the GPUs of this queue's workloads that may be
	// preempted per window.
	AnnotationDisruptionBudgetGPUs = "gantry.dev/disruption-budget-gpus"
	// AnnotationDisruptionBudgetWindow is the window of the budget, e.g. "1h" (default 1h).
	AnnotationDisruptionBudgetWindow = "gantry.dev/disruption-budget-window"
)

// knownScorers are the placement scorers the annotation may name.
func knownScorer(name string) bool {
	switch name {
	case "binpack", "spread", "fragmentation", "whole-gpu-islands":
		return true
	}
	return false
}

func gantryQueueExtensions(ann map[string]string, c errs) (api.PlacementPolicy, api.DisruptionBudget) {
	var p api.PlacementPolicy
	if s, ok := ann[AnnotationPlacementScorers]; ok {
		path := "metadata.annotations[" + AnnotationPlacementScorers + "]"
		for _, part := range strings.Split(s, ",") {
			name, w, _ := strings.Cut(strings.TrimSpace(part), "=")
			weight, err := strconv.ParseInt(strings.TrimSpace(w), 10, 64)
			switch {
			case !knownScorer(name):
				c.add(path, "unknown scorer %q: want binpack, spread, fragmentation or whole-gpu-islands", name)
			case err != nil || weight < 0:
				c.add(path, "scorer %s: weight %q is not a non-negative integer", name, w)
			default:
				p.Scorers = append(p.Scorers, api.WeightedScorer{Name: name, Weight: weight})
			}
		}
	}
	var b api.DisruptionBudget
	if s, ok := ann[AnnotationDisruptionBudgetGPUs]; ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			c.add("metadata.annotations["+AnnotationDisruptionBudgetGPUs+"]", "%q is not a non-negative integer", s)
		}
		b.MaxGPUs = n
		b.Window = api.Duration(3600e9)
	}
	if s, ok := ann[AnnotationDisruptionBudgetWindow]; ok {
		d, err := api.ParseDuration(s)
		if err != nil {
			c.add("metadata.annotations["+AnnotationDisruptionBudgetWindow+"]", "%v", err)
		}
		b.Window = d
	}
	return p, b
}
