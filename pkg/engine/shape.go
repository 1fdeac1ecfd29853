package engine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// shapeKey identifies what placement sees of a workload under an assignment: the pod
// sets (requests, counts, gang sizes, node constraints, topology) and the assigned
// flavors. Two workloads with the same key get the same placement answer on the same
// overlay, which lets a cycle skip shapes that already failed.
func shapeKey(w *api.Workload, a admission.Assignment) string {
	var b strings.Builder
	fmt.Fprintf(&b, "mm=%d|", w.MinMember)
	for _, ps := range w.PodSets {
		fmt.Fprintf(&b, "%s:%d/%d:%s:%s:", ps.Name, ps.Count, ps.MinCount, ps.Requests.String(), sortedMap(ps.NodeSelector))
		if ps.Affinity != nil {
			b.WriteString(ps.Affinity.String())
		}
		for _, t := range ps.Tolerations {
			b.WriteString(t.String())
		}
		if ps.Topology != nil {
			fmt.Fprintf(&b, "%+v", *ps.Topology)
		}
		b.WriteByte('|')
	}
	for _, ps := range a.PodSets {
		for _, r := range ps.Resources {
			fmt.Fprintf(&b, "%s.%s=%s;", ps.Name, r.Resource, r.Flavor)
		}
	}
	return b.String()
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + m[k] + ",")
	}
	return b.String()
}
