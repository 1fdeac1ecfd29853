//go:build k8sscale

package controller

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// checkBoundOnce reports what breaks "every pod bound exactly once": a pod not bound,
// more or fewer pods than submitted (a replacement pod means one was lost), a pod
// moved or deleted while the binder ran (the clock's faults).
func checkBoundOnce(pods []podTimes, faults []string, want int) []string {
	problems := append([]string(nil), faults...)
	if len(pods) != want {
		problems = append(problems, fmt.Sprintf("%d pods seen, want %d", len(pods), want))
	}
	for _, p := range pods {
		if p.node == "" {
			problems = append(problems, "pod "+p.name+" not bound")
		}
	}
	return problems
}

// checkGangsWhole reports gangs that do not have exactly size bound pods.
func checkGangsWhole(pods []podTimes, size int) []string {
	count := map[string]int{}
	for _, p := range pods {
		if p.node != "" {
			count[p.gang]++
		}
	}
	var problems []string
	for gang, n := range count {
		if n != size {
			problems = append(problems, fmt.Sprintf("gang %q has %d bound pods, want %d", gang, n, size))
		}
	}
	sort.Strings(problems)
	return problems
}

// checkNoOvercommit reports nodes whose live bound pods ask for more GPUs than the
// node's allocatable, and device IDs (Gantry's annotation) held by two live pods on one
// node. A pod that has finished holds nothing: its GPUs may be another pod's since.
func checkNoOvercommit(pods []corev1.Pod, allocatable map[string]int64) []string {
	used := map[string]int64{}
	holder := map[string]string{}
	var problems []string
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		used[p.Spec.NodeName] += gpusOf(p)
		for _, d := range strings.Split(p.Annotations[AnnotationDevices], ",") {
			if d == "" {
				continue
			}
			key := p.Spec.NodeName + "/" + d
			if other, dup := holder[key]; dup {
				problems = append(problems, fmt.Sprintf("device %s held by both %s and %s", key, other, p.Name))
			}
			holder[key] = p.Name
		}
	}
	for node, n := range used {
		if alloc, ok := allocatable[node]; !ok || n > alloc {
			problems = append(problems, fmt.Sprintf("node %s: %d GPUs bound, %d allocatable", node, n, alloc))
		}
	}
	sort.Strings(problems)
	return problems
}

// TestBenchChecks: the correctness checks find what they must and pass a clean run.
func TestBenchChecks(t *testing.T) {
	pod := func(name, node, devices string) corev1.Pod {
		p := corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{}}}}
		p.Name = name
		p.Annotations = map[string]string{AnnotationDevices: devices}
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		return p
	}
	finished := func(p corev1.Pod) corev1.Pod { p.Status.Phase = corev1.PodSucceeded; return p }
	failed := func(p corev1.Pod) corev1.Pod { p.Status.Phase = corev1.PodFailed; return p }
	alloc := map[string]int64{"n1": 1, "n2": 8}
	for _, tc := range []struct {
		name string
		pods []corev1.Pod
		want string // a substring of the first problem; "" for none
	}{
		{"clean", []corev1.Pod{pod("a", "n1", "0"), pod("b", "n2", "0"), pod("c", "n2", "1"), pod("u", "", "")}, ""},
		{"overcommit", []corev1.Pod{pod("a", "n1", ""), pod("b", "n1", "")}, "node n1: 2 GPUs bound, 1 allocatable"},
		{"shared device", []corev1.Pod{pod("a", "n2", "3"), pod("b", "n2", "3")}, "device n2/3 held by both a and b"},
		{"unknown node", []corev1.Pod{pod("a", "n9", "")}, "node n9"},
		{"a finished pod holds nothing", []corev1.Pod{finished(pod("a", "n1", "0")), pod("b", "n1", "0")}, ""},
		{"a failed pod holds nothing", []corev1.Pod{pod("a", "n2", "3"), failed(pod("b", "n2", "3"))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkNoOvercommit(tc.pods, alloc)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("problems %v, want none", got)
			case tc.want != "" && (len(got) == 0 || !strings.Contains(got[0], tc.want)):
				t.Errorf("problems %v, want one with %q", got, tc.want)
			}
		})
	}
	times := []podTimes{{name: "a", gang: "g", node: "n1"}, {name: "b", gang: "g"}}
	if got := checkBoundOnce(times, []string{"pod x moved"}, 3); len(got) != 3 {
		t.Errorf("checkBoundOnce = %v, want the fault, the count and the unbound pod", got)
	}
	if got := checkGangsWhole(times, 2); len(got) != 1 || !strings.Contains(got[0], `gang "g" has 1 bound pods`) {
		t.Errorf("checkGangsWhole = %v, want gang g short of one pod", got)
	}
}
