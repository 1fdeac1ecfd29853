package controller

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// object reads the object of gvk named name in the fixture's namespace, failing the
// test when it cannot.
func (f *fixture) object(gvk schema.GroupVersionKind, name string) *unstructured.Unstructured {
	f.t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, u); err != nil {
		f.t.Fatal(err)
	}
	return u
}

// waitResumed waits until Workload wl is admitted and the job object's suspend switch
// (at suspendPath) reads false.
func (f *fixture) waitResumed(what string, gvk schema.GroupVersionKind, name, wl string, suspendPath ...string) {
	f.t.Helper()
	f.eventually(20*time.Second, what+" admitted and unsuspended", func() (bool, string) {
		w := f.workload(wl)
		if w == nil {
			return false, "no workload"
		}
		s, found, _ := unstructured.NestedBool(f.object(gvk, name).Object, suspendPath...)
		return w.Status.Admission != nil && found && !s, string(w.Status.State) + ": " + w.Status.Message
	})
}

// assertErrNames checks that err is set and names every one of words.
func assertErrNames(t *testing.T, err error, words []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one naming %q", words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
}
