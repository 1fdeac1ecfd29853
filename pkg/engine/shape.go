package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// ShapeKey identifies what admission and placement see of a workload: its pod sets
// (requests, counts, gang sizes, node constraints, topology, DRA claims). Two workloads with the
// same key get the same quota and placement answers on the same state, which lets a
// cycle answer equivalent workloads once. It is computed once per workload (the
// scheduler keeps it), so it is built without fmt.
func ShapeKey(w *api.Workload) string {
	var b strings.Builder
	b.WriteString("mm=")
	b.WriteString(strconv.Itoa(int(w.MinMember)))
	b.WriteByte('|')
	for _, ps := range w.PodSets {
		b.WriteString(ps.Name)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(int(ps.Count)))
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(int(ps.MinCount)))
		b.WriteByte(':')
		b.WriteString(ps.Requests.String())
		if ps.ContainerGPU > 0 {
			b.WriteString("/c" + strconv.FormatInt(ps.ContainerGPU, 10))
		}
		b.WriteByte(':')
		b.WriteString(sortedMap(ps.NodeSelector))
		b.WriteByte(':')
		if ps.Affinity != nil {
			b.WriteString(ps.Affinity.String())
		}
		for _, t := range ps.Tolerations {
			b.WriteString(t.String())
		}
		if t := ps.Topology; t != nil {
			b.WriteString(string(t.Mode) + "/" + t.Level + "/" + t.SliceLevel + "/" +
				strconv.Itoa(int(t.SliceSize)) + "/" + strconv.Itoa(int(t.HighestTierAllowed)) +
				"/" + t.Group + "/" + fmt.Sprint(t.InnerSlices))
		}
		writeClaimsKey(&b, ps.Claims)
		b.WriteByte('|')
	}
	return b.String()
}

// flavorKey names the flavors an assignment gives each pod set and resource: with the
// shape key it is what placement sees.
func flavorKey(a admission.Assignment) string {
	var b strings.Builder
	for _, ps := range a.PodSets {
		for _, r := range ps.Resources {
			b.WriteString(ps.Name)
			b.WriteByte('.')
			b.WriteString(string(r.Resource))
			b.WriteByte('=')
			b.WriteString(r.Flavor)
			b.WriteByte(';')
		}
	}
	return b.String()
}

func sortedMap(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
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
