package controller

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The failure count is read back from the Workload; a count that is not one is an
// error naming the Workload and the annotation, not a silent zero.
func TestFailuresOfReadsTheAnnotation(t *testing.T) {
	wl := func(v string, set bool) *v1alpha1.Workload {
		w := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "train"}}
		if set {
			w.Annotations = map[string]string{AnnotationFailures: v}
		}
		return w
	}
	for _, tc := range []struct {
		v       string
		set     bool
		want    int
		wantErr bool
	}{{set: false, want: 0}, {v: "3", set: true, want: 3}, {v: "-1", set: true, wantErr: true}, {v: "two", set: true, wantErr: true}} {
		n, err := failuresOf(wl(tc.v, tc.set))
		if n != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%q: got %d, %v; want %d, error %v", tc.v, n, err, tc.want, tc.wantErr)
		}
		if err != nil && (!strings.Contains(err.Error(), "team/train") || !strings.Contains(err.Error(), AnnotationFailures)) {
			t.Errorf("%q: error %q does not name the Workload and the annotation", tc.v, err)
		}
	}
}
