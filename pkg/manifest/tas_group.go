package manifest

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// checkPodSetGroups applies Kueue's rules for podset-group-name across one workload's
// pod sets (jobframework.ValidatePodSetGroupingTopology): a group is exactly 2 pod sets,
// at least one of them with a single pod, both with the same required or preferred
// level. Errors name the pod set and the annotation.
func checkPodSetGroups(w *api.Workload, c errs) {
	groups := map[string][]int{}
	for i, ps := range w.PodSets {
		if ps.Topology != nil && ps.Topology.Group != "" {
			groups[ps.Topology.Group] = append(groups[ps.Topology.Group], i)
		}
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		checkPodSetGroup(w, g, groups[g], c)
	}
}

func checkPodSetGroup(w *api.Workload, g string, members []int, c errs) {
	field := func(i int) string {
		return fmt.Sprintf("pod set %q annotations[%s]", w.PodSets[i].Name, api.AnnotationPodSetGroupName)
	}
	if len(members) != 2 {
		for _, i := range members {
			c.add(field(i), "group %q has %d pod set(s): a group is exactly 2 pod sets", g, len(members))
		}
		return
	}
	a, b := w.PodSets[members[0]], w.PodSets[members[1]]
	if a.Count != 1 && b.Count != 1 {
		c.add(field(members[0]), "group %q: one of its pod sets must have a single pod, got %d and %d pods", g, a.Count, b.Count)
	}
	if a.Topology.Mode != b.Topology.Mode || a.Topology.Level != b.Topology.Level {
		c.add(field(members[1]), "group %q: %s topology %q disagrees with pod set %q's %s topology %q: a group shares one level",
			g, b.Topology.Mode, b.Topology.Level, a.Name, a.Topology.Mode, a.Topology.Level)
	}
}
