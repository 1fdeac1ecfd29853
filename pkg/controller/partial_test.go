package controller

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

// parallelismFor: a resumed Job takes its partial admission's count, a suspended one
// gets its Workload's count back, and anything else keeps its own parallelism.
func TestParallelismFor(t *testing.T) {
	admitted := func(n int32) *v1alpha1.Admission {
		return &v1alpha1.Admission{ClusterQueue: "cq", PodSetAssignments: []v1alpha1.PodSetAssignment{{Name: "main", Count: ptr.To(n)}}}
	}
	tests := []struct {
		name      string
		parallel  int32
		admission *v1alpha1.Admission
		suspend   bool
		want      int32 // 0: keep
	}{
		{name: "resumed with 9 of 20", parallel: 20, admission: admitted(9), want: 9},
		{name: "resumed with all 20", parallel: 20, admission: admitted(20)},
		{name: "resumed, already 9", parallel: 9, admission: admitted(9)},
		{name: "no admission", parallel: 20},
		{name: "suspended after a partial run: restored", parallel: 9, suspend: true, want: 20},
		{name: "suspended at full count", parallel: 20, suspend: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: ptr.To(tc.parallel)}}
			wl := &v1alpha1.Workload{Spec: v1alpha1.WorkloadSpec{PodSets: []v1alpha1.PodSet{{Name: "main", Count: 20}}},
				Status: v1alpha1.WorkloadStatus{Admission: tc.admission}}
			got, ok := parallelismFor(job, wl, tc.suspend)
			if ok != (tc.want != 0) || (ok && got != tc.want) {
				t.Errorf("parallelismFor = %d %v, want %d (0: keep)", got, ok, tc.want)
			}
		})
	}
}
