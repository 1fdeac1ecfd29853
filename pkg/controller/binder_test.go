package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

func TestMatchGang(t *testing.T) {
	two := []v1alpha1.PodPlacement{{PodSet: "main", Index: 0, Node: "n1"}, {PodSet: "main", Index: 1, Node: "n2"}}
	mixed := []v1alpha1.PodPlacement{{PodSet: "head", Index: 0, Node: "n1"}, {PodSet: "workers", Index: 0, Node: "n2"}}
	bySetLabel := func(p *corev1.Pod) string { return p.Labels["set"] }
	withSet := func(name, set string) *corev1.Pod {
		p := pod(name, "", nil)
		p.Labels = map[string]string{"set": set}
		return p
	}
	cases := []struct {
		name       string
		placements []v1alpha1.PodPlacement
		pods       []*corev1.Pod
		podSetOf   func(*corev1.Pod) string
		// want maps each pod to bind to its slot; nil means "bind nothing yet".
		want map[string]string
	}{
		{name: "incomplete gang binds nothing", placements: two, pods: []*corev1.Pod{pod("a", "", nil)}, podSetOf: podSetOfJob},
		{name: "complete gang in name order", placements: two, pods: []*corev1.Pod{pod("b", "", nil), pod("a", "", nil)},
			podSetOf: podSetOfJob, want: map[string]string{"a": "main-0", "b": "main-1"}},
		{name: "a bound pod keeps its slot; a replacement takes the free one", placements: two,
			pods:     []*corev1.Pod{pod("a", "n1", map[string]string{AnnotationPodSlot: "main-0"}), pod("c", "", nil)},
			podSetOf: podSetOfJob, want: map[string]string{"c": "main-1"}},
		{name: "pods go to slots of their own pod set", placements: mixed,
			pods:     []*corev1.Pod{withSet("w", "workers"), withSet("h", "head")},
			podSetOf: bySetLabel, want: map[string]string{"h": "head-0", "w": "workers-0"}},
		{name: "two workers and no head is incomplete", placements: mixed,
			pods: []*corev1.Pod{withSet("w1", "workers"), withSet("w2", "workers")}, podSetOf: bySetLabel},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := MatchGang(tc.placements, tc.pods, tc.podSetOf)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("got %d bindings, want none", len(got))
				}
				return
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d bindings, want %d", len(got), len(tc.want))
			}
			for _, b := range got {
				if tc.want[b.pod.Name] != slotName(b.slot) {
					t.Errorf("pod %s -> %s, want %s", b.pod.Name, slotName(b.slot), tc.want[b.pod.Name])
				}
			}
		})
	}
}
