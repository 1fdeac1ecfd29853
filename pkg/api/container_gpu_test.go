package api_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gantry-sched/gantry/pkg/api"
)

func TestContainerGPU(t *testing.T) {
	ask := func(req, lim map[string]string) corev1.Container {
		c := corev1.Container{Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}}
		for k, v := range req {
			c.Resources.Requests[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		for k, v := range lim {
			c.Resources.Limits[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		return c
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want int64
	}{
		{"no GPU", corev1.PodSpec{Containers: []corev1.Container{ask(map[string]string{"cpu": "1"}, nil)}}, 0},
		{"one container, limit only", corev1.PodSpec{Containers: []corev1.Container{ask(nil, map[string]string{"nvidia.com/gpu": "2"})}}, 2},
		{"two containers of one each", corev1.PodSpec{Containers: []corev1.Container{
			ask(map[string]string{"nvidia.com/gpu": "1"}, nil), ask(map[string]string{"nvidia.com/gpu": "1"}, nil)}}, 1},
		{"shared replicas, init container larger", corev1.PodSpec{
			Containers:     []corev1.Container{ask(map[string]string{"nvidia.com/gpu.shared": "1"}, nil)},
			InitContainers: []corev1.Container{ask(nil, map[string]string{"nvidia.com/gpu.shared": "3"})}}, 3},
	}
	for _, tc := range tests {
		if got := api.ContainerGPU(&tc.spec); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
