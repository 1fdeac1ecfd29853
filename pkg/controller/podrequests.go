package controller

import corev1 "k8s.io/api/core/v1"

// PodRequests is what the scheduler charges for one pod of spec: the sum over
// containers and restartable (sidecar) init containers, at least the largest plain
// init container, plus the pod overhead. A resource with a limit but no request is
// charged its limit, as Kubernetes defaults it.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for i := range spec.Containers {
		addList(sum, containerRequests(&spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		req := containerRequests(c)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addList(sidecars, req)
			continue
		}
		// A plain init container runs alongside the sidecars started before it.
		withSidecars := req.DeepCopy()
		addList(withSidecars, sidecars)
		maxList(initMax, withSidecars)
	}
	addList(sum, sidecars)
	maxList(sum, initMax)
	addList(sum, spec.Overhead)
	return sum
}

func containerRequests(c *corev1.Container) corev1.ResourceList {
	out := c.Resources.Requests.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range c.Resources.Limits {
		if _, ok := out[name]; !ok {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

func addList(into, add corev1.ResourceList) {
	for name, q := range add {
		cur := into[name]
		cur.Add(q)
		into[name] = cur
	}
}

func maxList(into, other corev1.ResourceList) {
	for name, q := range other {
		if cur, ok := into[name]; !ok || q.Cmp(cur) > 0 {
			into[name] = q.DeepCopy()
		}
	}
}
