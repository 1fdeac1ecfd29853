package manifest

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// podSet converts a pod template into a pod set of count pods; path is the template's
// path in the document (for errors), e.g. "spec.template".
func podSet(name string, count int32, t corev1.PodTemplateSpec, path string, c errs) api.PodSet {
	if count < 0 {
		c.add(path, "pod count %d is negative", count)
		count = 0
	}
	spec := t.Spec
	ps := api.PodSet{
		Name:              name,
		Count:             count,
		Requests:          podRequests(spec, joinKey(path, "spec"), c),
		ContainerGPU:      api.ContainerGPU(&spec),
		NodeSelector:      spec.NodeSelector,
		Tolerations:       spec.Tolerations,
		PriorityClassName: spec.PriorityClassName,
		SchedulerName:     spec.SchedulerName,
		Topology:          topologyRequest(t.Annotations, joinKey(path, "metadata")+".annotations", c),
		Claims:            podClaims(spec, joinKey(path, "spec"), c),
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		ps.Affinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(spec.Containers) == 0 {
		c.add(joinKey(path, "spec")+".containers", "a pod needs at least one container")
	}
	if _, err := devices.ParseRequest(ps.Requests); err != nil {
		c.add(joinKey(path, "spec")+".containers", "%v", err)
	}
	return ps
}

// podRequests computes a pod's effective requests the way the scheduler does: a
// container's request defaults to its limit when absent (for every resource, extended
// ones included); regular containers and restartable (sidecar) init containers add up;
// each regular init container, with the sidecars started before it, is a lower bound;
// the pod's overhead is added on top.
func podRequests(spec corev1.PodSpec, path string, c errs) resources.Vector {
	sum := resources.Vector{}
	for i, ct := range spec.Containers {
		sum.AddInPlace(containerRequests(ct, joinIndex(path+".containers", i), c))
	}
	sidecars := resources.Vector{}
	initMax := resources.Vector{}
	for i, ct := range spec.InitContainers {
		r := containerRequests(ct, joinIndex(path+".initContainers", i), c)
		if ct.RestartPolicy != nil && *ct.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars.AddInPlace(r)
			continue
		}
		maxInPlace(initMax, r.Add(sidecars))
	}
	total := sum.AddInPlace(sidecars)
	maxInPlace(total, initMax)
	for _, n := range sortedNames(spec.Overhead) {
		if a, ok := quantity(n, spec.Overhead[corev1.ResourceName(n)], path+".overhead["+string(n)+"]", c); ok {
			total[n] = resources.SatAdd(total[n], a)
		}
	}
	for n, a := range total {
		if a == 0 {
			delete(total, n)
		}
	}
	return total
}

// containerRequests reads one container's requests, defaulting each from its limit.
func containerRequests(ct corev1.Container, path string, c errs) resources.Vector {
	out := resources.Vector{}
	for _, n := range sortedNames(ct.Resources.Requests) {
		if a, ok := quantity(n, ct.Resources.Requests[corev1.ResourceName(n)], path+".resources.requests["+string(n)+"]", c); ok {
			out[n] = a
			checkMIGResource(n, path+".resources.requests["+string(n)+"]", c)
		}
	}
	for _, n := range sortedNames(ct.Resources.Limits) {
		lp := path + ".resources.limits[" + string(n) + "]"
		a, ok := quantity(n, ct.Resources.Limits[corev1.ResourceName(n)], lp, c)
		if !ok {
			continue
		}
		if _, has := ct.Resources.Requests[corev1.ResourceName(n)]; !has {
			out[n] = a
			checkMIGResource(n, lp, c)
		} else if out[n] > a {
			c.add(lp, "limit %s is below the request %s", resources.Format(n, a), resources.Format(n, out[n]))
		}
	}
	return out
}

// checkMIGResource rejects nvidia.com/mig-<profile> when no GPU model has that profile,
// and NVIDIA's "+" spelling, which no Kubernetes resource name may hold (the device
// plugin advertises nvidia.com/mig-1g.10gb.me).
func checkMIGResource(n resources.Name, path string, c errs) {
	p, ok := n.MIGProfile()
	if !ok {
		return
	}
	if want := resources.MIGResource(p); want != n && strings.Contains(string(n), "+") {
		c.add(path, "%s is not a valid resource name: write %s", n, want)
		return
	}
	for _, m := range devices.Models() {
		if _, found := m.Profile(p); found {
			return
		}
	}
	c.add(path, "MIG profile %q exists on no known GPU model", p)
}

func maxInPlace(v, o resources.Vector) {
	for n, a := range o {
		if a > v[n] {
			v[n] = a
		}
	}
}

// sortedNames lists a ResourceList's names in order, for deterministic errors.
func sortedNames(l corev1.ResourceList) []resources.Name {
	out := make([]resources.Name, 0, len(l))
	for n := range l {
		out = append(out, resources.Name(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
