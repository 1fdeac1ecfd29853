package engine

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

// maxFallbacks bounds how many flavors one workload may fall back from per cycle.
const maxFallbacks = 4

// withoutFlavors returns a copy of w whose pod sets may not land on nodes of the given
// flavors: every required node-affinity term gets "label NotIn [value]" for each of the
// flavors' node labels. Admission then rates those flavors NoFlavorMatches and tries
// the next one in the ClusterQueue's order (spot → on-demand fallback), and placement
// honours the same constraint. The caller's workload is not modified.
func withoutFlavors(w *api.Workload, flavors []api.ResourceFlavor) *api.Workload {
	var reqs []corev1.NodeSelectorRequirement
	for _, f := range flavors {
		keys := make([]string, 0, len(f.NodeLabels))
		for k := range f.NodeLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			reqs = append(reqs, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpNotIn, Values: []string{f.NodeLabels[k]}})
		}
	}
	out := *w
	out.PodSets = make([]api.PodSet, len(w.PodSets))
	for i, ps := range w.PodSets {
		aff := &corev1.NodeSelector{}
		if ps.Affinity != nil && len(ps.Affinity.NodeSelectorTerms) > 0 {
			for _, t := range ps.Affinity.NodeSelectorTerms {
				t.MatchExpressions = append(append([]corev1.NodeSelectorRequirement(nil), t.MatchExpressions...), reqs...)
				aff.NodeSelectorTerms = append(aff.NodeSelectorTerms, t)
			}
		} else {
			aff.NodeSelectorTerms = []corev1.NodeSelectorTerm{{MatchExpressions: reqs}}
		}
		ps.Affinity = aff
		out.PodSets[i] = ps
	}
	return &out
}

// assignedFlavors lists the flavors an assignment uses that have node labels (only
// those can be excluded), sorted.
func assignedFlavors(a admission.Assignment, known map[string]api.ResourceFlavor) []api.ResourceFlavor {
	set := map[string]bool{}
	for _, ps := range a.PodSets {
		for _, r := range ps.Resources {
			set[r.Flavor] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []api.ResourceFlavor
	for _, n := range names {
		if f, ok := known[n]; ok && len(f.NodeLabels) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func flavorNames(fs []api.ResourceFlavor) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ",")
}
