package controller

import (
	"reflect"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// TestRestoredNominated: the waits a restarted controller restores are the simulator's
// nominated lists (the preemptor's victims since it last started), from the
// preemptor's record plus the victims still leaving that name it; the world names the
// leaving ones in flight, and every preempted-by annotation is restored.
func TestRestoredNominated(t *testing.T) {
	cases := []struct {
		name      string
		workloads []v1alpha1.Workload
		pods      []*corev1.Pod
		// wantNominated is the whole Nominated map (nil entries absent).
		wantNominated map[api.WorkloadID][]api.WorkloadID
		// wantInFlight are the workloads leaving.
		wantInFlight map[api.WorkloadID]bool
	}{{
		name: "record of a pending preemptor, victim running again",
		workloads: []v1alpha1.Workload{
			k8s.MakeWorkload("ns", "p").Annotate(AnnotationNominatedVictims, "ns/a").Obj(),
			k8s.MakeWorkload("ns", "a").Admitted("cq").Annotate(AnnotationPreemptedBy, "ns/p").Obj(),
		},
		wantNominated: map[api.WorkloadID][]api.WorkloadID{"ns/p": {"ns/a"}},
		wantInFlight:  map[api.WorkloadID]bool{},
	}, {
		name: "record joined with a victim still leaving, each once",
		workloads: []v1alpha1.Workload{
			k8s.MakeWorkload("ns", "p").Annotate(AnnotationNominatedVictims, "ns/a,ns/b").Obj(),
			k8s.MakeWorkload("ns", "a").Admitted("cq").Annotate(AnnotationPreemptedBy, "ns/p").Obj(),
			k8s.MakeWorkload("ns", "b").Admitted("cq").Annotate(AnnotationPreemptionNotice, "2030-01-01T00:00:00Z").Annotate(AnnotationPreemptedBy, "ns/p").Obj(),
			k8s.MakeWorkload("ns", "c").Admitted("cq").Annotate(AnnotationPreemptionNotice, "2030-01-01T00:00:00Z").Annotate(AnnotationPreemptedBy, "ns/p").Obj(),
		},
		wantNominated: map[api.WorkloadID][]api.WorkloadID{"ns/p": {"ns/a", "ns/b", "ns/c"}},
		wantInFlight:  map[api.WorkloadID]bool{"ns/b": true, "ns/c": true},
	}, {
		name: "evicted victim whose pod still terminates is still leaving",
		workloads: []v1alpha1.Workload{
			k8s.MakeWorkload("ns", "p").Annotate(AnnotationNominatedVictims, "ns/a").Obj(),
			k8s.MakeWorkload("ns", "a").Annotate(AnnotationPreemptedBy, "ns/p").Obj(),
		},
		pods:          []*corev1.Pod{pod("a-0", "n1", map[string]string{AnnotationWorkload: "ns/a"})},
		wantNominated: map[api.WorkloadID][]api.WorkloadID{"ns/p": {"ns/a"}},
		wantInFlight:  map[api.WorkloadID]bool{"ns/a": true},
	}, {
		name: "admitted workload's stale record is ignored (the simulator clears it at start)",
		workloads: []v1alpha1.Workload{
			k8s.MakeWorkload("ns", "q").Admitted("cq").Annotate(AnnotationNominatedVictims, "ns/a").Obj(),
			k8s.MakeWorkload("ns", "a").Annotate(AnnotationPreemptedBy, "ns/q").Obj(),
		},
		wantNominated: map[api.WorkloadID][]api.WorkloadID{},
		wantInFlight:  map[api.WorkloadID]bool{},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &world{objs: &api.Objects{}, nodeIndex: map[string]int{}, priorities: map[string]int32{}, workloads: tc.workloads, pods: tc.pods}
			cs, err := buildState(w, ToAPIWorkload, nil)
			if err != nil {
				t.Fatal(err)
			}
			r := readRestored(w, cs, time.Unix(0, 0))
			if !reflect.DeepEqual(r.nominated, tc.wantNominated) {
				t.Errorf("nominated = %v, want %v", r.nominated, tc.wantNominated)
			}
			if !reflect.DeepEqual(cs.inFlight, tc.wantInFlight) {
				t.Errorf("inFlight = %v, want %v", cs.inFlight, tc.wantInFlight)
			}
			for _, wl := range tc.workloads {
				by := wl.Annotations[AnnotationPreemptedBy]
				if got := r.preemptedBy[api.WorkloadID("ns/"+wl.Name)]; string(got) != by {
					t.Errorf("preemptedBy[%s] = %q, want %q", wl.Name, got, by)
				}
			}
		})
	}
}

// TestParseNominated: the record's value round-trips, blanks and repeats dropped.
func TestParseNominated(t *testing.T) {
	cases := []struct {
		in string
		// want is the parsed list (nil for none).
		want []api.WorkloadID
	}{
		{"", nil},
		{" , ,", nil},
		{"ns/a", []api.WorkloadID{"ns/a"}},
		{"ns/a, ns/b,ns/a,", []api.WorkloadID{"ns/a", "ns/b"}},
	}
	for _, tc := range cases {
		got := parseNominated(tc.in)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseNominated(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if back := parseNominated(formatNominated(got)); !reflect.DeepEqual(back, tc.want) {
			t.Errorf("round trip of %q = %v, want %v", tc.in, back, tc.want)
		}
	}
}
