package controller

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestWakeupCoalesces: any number of pokes before a pass make exactly one pass, and
// Poke never blocks.
func TestWakeupCoalesces(t *testing.T) {
	w := newWakeup()
	for range 100 {
		w.Poke()
	}
	passes := 0
	for {
		select {
		case <-w.ch:
			passes++
			continue
		default:
		}
		break
	}
	if passes != 1 {
		t.Errorf("100 pokes gave %d passes, want 1", passes)
	}
	w.Poke()
	w.drain()
	select {
	case <-w.ch:
		t.Errorf("a drained poke still woke the loop")
	default:
	}
}

// TestSplitServed: kinds of group versions discovery does not list are reported, not
// looked up; with discovery unknown (nil) every kind is tried.
func TestSplitServed(t *testing.T) {
	jobset := schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	ray := schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"}
	kinds := []schema.GroupVersionKind{jobset, deploy, ray}
	for _, tc := range []struct {
		name    string
		served  map[string]bool
		ok      []schema.GroupVersionKind
		missing []string
	}{
		{name: "discovery unknown", served: nil, ok: kinds},
		{name: "only apps served", served: map[string]bool{"apps/v1": true, "v1": true},
			ok: []schema.GroupVersionKind{deploy}, missing: []string{jobset.String() + ": not served", ray.String() + ": not served"}},
		{name: "another version of the group", served: map[string]bool{"apps/v1": true, "jobset.x-k8s.io/v1": true, "ray.io/v1": true},
			ok: []schema.GroupVersionKind{deploy, ray}, missing: []string{jobset.String() + ": not served"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing, ok := splitServed(kinds, tc.served)
			if !reflect.DeepEqual(ok, tc.ok) || !reflect.DeepEqual(missing, tc.missing) {
				t.Errorf("splitServed = %v, %v; want %v, %v", missing, ok, tc.missing, tc.ok)
			}
		})
	}
}
