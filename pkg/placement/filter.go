package placement

import (
	"fmt"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// staticCheck runs the checks that do not depend on what is bound on the node, in Reason
// order. It returns the first rejection, or all of them when all is set.
func staticCheck(n *cluster.Node, p *PodRequest, all bool, out []Rejection) []Rejection {
	if n.Unschedulable {
		if out = append(out, Rejection{Reason: ReasonUnschedulable, Detail: "node is cordoned"}); !all {
			return out
		}
	}
	if !n.Ready {
		if out = append(out, Rejection{Reason: ReasonNotReady, Detail: "Ready condition is not True"}); !all {
			return out
		}
	}
	for k := range n.Taints {
		t := &n.Taints[k]
		if t.Effect == corev1.TaintEffectPreferNoSchedule || tolerated(t, p.Tolerations) {
			continue
		}
		if out = append(out, Rejection{Reason: ReasonTaint, Subject: taintString(t), Detail: "not tolerated"}); !all {
			return out
		}
	}
	if key, ok := pairsMatch(n.Labels, p.selector); !ok {
		if out = append(out, Rejection{Reason: ReasonNodeSelector, Subject: key, Detail: fmt.Sprintf("node has %s=%q, pod wants %q", key, n.Labels[key], p.NodeSelector[key])}); !all {
			return out
		}
	}
	if p.Affinity != nil && !affinityMatches(n.Labels, p.Affinity) {
		if out = append(out, Rejection{Reason: ReasonNodeAffinity, Detail: "no required node affinity term matches"}); !all {
			return out
		}
	}
	if key, ok := pairsMatch(n.Labels, p.flavor); !ok {
		out = append(out, Rejection{Reason: ReasonFlavorLabels, Subject: key, Detail: fmt.Sprintf("flavor needs %s=%q", key, p.FlavorLabels[key])})
	}
	return out
}

// resourceCheck checks free non-GPU resources, then asks the device model. On success it
// returns the device assignment.
func resourceCheck(ov *cluster.Overlay, i int, p *PodRequest, all bool, out []Rejection) (devices.Assignment, []Rejection) {
	return resourceCheckWith(ov, i, p, all, out, nil)
}

// resourceCheckWith is resourceCheck reading the device answer from fit entry e (kept
// up to date there) when e is set: a diagnosis right after a chooser asks the nodes the
// chooser just asked.
func resourceCheckWith(ov *cluster.Overlay, i int, p *PodRequest, all bool, out []Rejection, e *fitEntry) (devices.Assignment, []Rejection) {
	n := len(out)
	if out = nonGPUCheck(ov, i, p, all, out); len(out) > n && !all {
		return devices.Assignment{}, out
	}
	if p.GPU.IsZero() {
		return devices.Assignment{}, out
	}
	d := ov.Devices(i)
	if d == nil {
		return devices.Assignment{}, append(out, Rejection{Reason: ReasonDevices, Resource: firstGPUName(p), Detail: "node has no GPUs"})
	}
	var a devices.Assignment
	var ref *devices.Refusal
	if e != nil {
		refreshFit(e, ov, i, p)
		a, ref = e.assign, e.refusal
	} else {
		a, ref = d.Fit(p.GPU)
	}
	if ref != nil {
		return devices.Assignment{}, append(out, deviceRejection(d, p, ref))
	}
	return a, out
}

// nonGPUCheck compares the non-GPU requests with the node's free resources.
func nonGPUCheck(ov *cluster.Overlay, i int, p *PodRequest, all bool, out []Rejection) []Rejection {
	if p.cpuMemOnly {
		// The common case without map look-ups (it runs for every node a pod is tried
		// on); a shortfall takes the full path below, which reports it.
		cpu, mem := ov.FreeCPUMemory(i)
		pods, limited := ov.FreePods(i)
		if cpu >= p.cpu && mem >= p.mem && (!limited || pods >= p.pods) {
			return out
		}
	}
	free := ov.Free(i)
	alloc := ov.Node(i).Allocatable
	for _, name := range p.names {
		want := p.NonGPU[name]
		if want <= 0 {
			continue
		}
		if name == resources.Pods {
			if _, declared := alloc[resources.Pods]; !declared {
				continue
			}
		}
		if have := free[name]; want > have {
			out = append(out, Rejection{Reason: ReasonInsufficient, Resource: name,
				short: shortfall{set: true, want: want, have: have, alloc: alloc[name]}})
			if !all {
				return out
			}
		}
	}
	return out
}

func firstGPUName(p *PodRequest) resources.Name {
	if names := p.GPU.Vector().Names(); len(names) > 0 {
		return names[0]
	}
	return resources.NvidiaGPU
}

// CheckPodOnNode reports every reason pod p does not fit the named node in the overlay
// (nil when it fits), for `gantry explain`. An unknown node is a single rejection.
func CheckPodOnNode(ov *cluster.Overlay, p *PodRequest, node string) []Rejection {
	i, ok := ov.NodeIndex(node)
	if !ok {
		return []Rejection{{Reason: ReasonNodeSelector, Subject: "name", Detail: fmt.Sprintf("node %q does not exist", node)}}
	}
	return CheckPodOnNodeAt(ov, p, i)
}

// tolerated reports whether some toleration tolerates taint t (Kubernetes' rules:
// empty key with Exists tolerates everything; empty effect matches every effect).
func tolerated(t *corev1.Taint, tols []corev1.Toleration) bool {
	for k := range tols {
		tol := &tols[k]
		if tol.Effect != "" && tol.Effect != t.Effect {
			continue
		}
		if tol.Key == "" && tol.Operator == corev1.TolerationOpExists {
			return true
		}
		if tol.Key != t.Key {
			continue
		}
		if tol.Operator == corev1.TolerationOpExists || tol.Value == t.Value {
			return true
		}
	}
	return false
}

func taintString(t *corev1.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// pairsMatch checks the wanted labels (sorted by key) against have and returns the
// first, so smallest, key that does not match: the reported key is deterministic.
func pairsMatch(have map[string]string, want []labelPair) (string, bool) {
	for _, w := range want {
		if got, ok := have[w.key]; !ok || got != w.value {
			return w.key, false
		}
	}
	return "", true
}

// affinityMatches evaluates required node affinity: terms are ORed, expressions inside a
// term ANDed. A term with no expressions matches nothing, as in Kubernetes.
func affinityMatches(labels map[string]string, sel *corev1.NodeSelector) bool {
	for _, term := range sel.NodeSelectorTerms {
		if len(term.MatchExpressions) == 0 {
			continue
		}
		ok := true
		for _, e := range term.MatchExpressions {
			if !exprMatches(labels, e) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func exprMatches(labels map[string]string, e corev1.NodeSelectorRequirement) bool {
	v, has := labels[e.Key]
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return has && contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(e.Values) != 1 {
			return false
		}
		got, err1 := strconv.ParseInt(v, 10, 64)
		bound, err2 := strconv.ParseInt(e.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if e.Operator == corev1.NodeSelectorOpGt {
			return got > bound
		}
		return got < bound
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// preferNoScheduleCount counts PreferNoSchedule taints the pod does not tolerate.
func preferNoScheduleCount(n *cluster.Node, p *PodRequest) int {
	c := 0
	for k := range n.Taints {
		t := &n.Taints[k]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && !tolerated(t, p.Tolerations) {
			c++
		}
	}
	return c
}
