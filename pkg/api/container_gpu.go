package api

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// ContainerGPU is the most nvidia.com/gpu or nvidia.com/gpu.shared units any one
// container of the pod asks for (its request, or its limit when it has no request).
// NVIDIA's device plugin hands each container its own devices, and with MPS (or
// time-slicing with failRequestsGreaterThanOne) it refuses a container asking for more
// than one replica, so the scheduler needs this next to the pod's summed requests.
func ContainerGPU(spec *corev1.PodSpec) int64 {
	var most int64
	for _, list := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for i := range list {
			for _, n := range []resources.Name{resources.NvidiaGPU, resources.NvidiaGPUShared} {
				most = max(most, containerAsk(&list[i], corev1.ResourceName(n)))
			}
		}
	}
	return most
}

func containerAsk(c *corev1.Container, n corev1.ResourceName) int64 {
	if q, ok := c.Resources.Requests[n]; ok {
		return q.Value()
	}
	if q, ok := c.Resources.Limits[n]; ok {
		return q.Value()
	}
	return 0
}
