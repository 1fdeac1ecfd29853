package admission

import (
	"fmt"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

// flavorAdmits reports whether the nodes of flavor can run the pod set, the way Kueue
// decides it: only label keys the flavor defines are checked against the pod set's
// nodeSelector and required node affinity, and every NoSchedule/NoExecute taint of the
// flavor must be tolerated by the pod set or by the flavor's own tolerations (which
// Kueue adds to admitted pods). The string says why not.
func flavorAdmits(f *api.ResourceFlavor, ps *api.PodSet) (bool, string) {
	for _, k := range sortedKeys(ps.NodeSelector) {
		if v, ok := f.NodeLabels[k]; ok && v != ps.NodeSelector[k] {
			return false, fmt.Sprintf("nodeSelector %s=%s does not match flavor label %s=%s", k, ps.NodeSelector[k], k, v)
		}
	}
	if ps.Affinity != nil && len(ps.Affinity.NodeSelectorTerms) > 0 {
		matched := false
		for _, term := range ps.Affinity.NodeSelectorTerms {
			if termMatches(f.NodeLabels, term) {
				matched = true
				break
			}
		}
		if !matched {
			return false, "required node affinity does not match the flavor's node labels"
		}
	}
	for i := range f.NodeTaints {
		t := &f.NodeTaints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !tolerated(t, ps.Tolerations) && !tolerated(t, f.Tolerations) {
			return false, fmt.Sprintf("taint %s=%s:%s is not tolerated", t.Key, t.Value, t.Effect)
		}
	}
	return true, ""
}

func tolerated(t *corev1.Taint, tols []corev1.Toleration) bool {
	for i := range tols {
		if tols[i].ToleratesTaint(t) {
			return true
		}
	}
	return false
}

// termMatches evaluates one node selector term on the keys the flavor defines; keys the
// flavor does not define are left to placement.
func termMatches(labels map[string]string, term corev1.NodeSelectorTerm) bool {
	for _, e := range term.MatchExpressions {
		v, has := labels[e.Key]
		if !has {
			continue
		}
		if !exprMatches(e, v) {
			return false
		}
	}
	return true
}

func exprMatches(e corev1.NodeSelectorRequirement, v string) bool {
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return true
	case corev1.NodeSelectorOpDoesNotExist:
		return false
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(e.Values) != 1 {
			return false
		}
		have, err1 := strconv.ParseInt(v, 10, 64)
		want, err2 := strconv.ParseInt(e.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if e.Operator == corev1.NodeSelectorOpGt {
			return have > want
		}
		return have < want
	}
	return false
}

func contains(vs []string, v string) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}
