package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// gangPodWithClaim is a gang pod whose container uses the pod claim "gpu" from
// template (none when template is "").
func gangPodWithClaim(name, gang, size, template string) *corev1.Pod {
	p := k8s.MakePod("", name).Queue("lq").Gang(gang, size).Obj()
	if template != "" {
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(template)}}
		p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	return p
}

// TestGangWorkloadRecordsClaims: a pod gang's Workload carries its pods' claims as a
// Job's does (AnnotationPodClaims, fields named as the pod's); pods whose claims differ,
// or a container claim naming no pod claim, make the gang invalid, naming pod and field.
func TestGangWorkloadRecordsClaims(t *testing.T) {
	noPodClaim := gangPodWithClaim("g-1", "g", "2", "")
	noPodClaim.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	for _, tc := range []struct {
		name    string
		pods    []*corev1.Pod
		want    []api.PodClaim // nil: no annotation
		wantErr []string
	}{
		{name: "same template claim", pods: []*corev1.Pod{gangPodWithClaim("g-0", "g", "2", "two"), gangPodWithClaim("g-1", "g", "2", "two")},
			want: []api.PodClaim{{Name: "gpu", ResourceClaimTemplateName: "two", Containers: []string{"main"}, Field: "spec.resourceClaims[0]"}}},
		{name: "no claims", pods: []*corev1.Pod{gangPodWithClaim("g-0", "g", "2", ""), gangPodWithClaim("g-1", "g", "2", "")}},
		{name: "claims differ", pods: []*corev1.Pod{gangPodWithClaim("g-0", "g", "2", "two"), gangPodWithClaim("g-1", "g", "2", "four")},
			wantErr: []string{"pod /g-1", "spec.resourceClaims", "differ from pod g-0"}},
		{name: "container claim names no pod claim", pods: []*corev1.Pod{gangPodWithClaim("g-0", "g", "2", "two"), noPodClaim},
			wantErr: []string{"Pod g-1", "spec.containers[0].resources.claims[0].name", `claim "gpu" is not in the pod's spec.resourceClaims`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := groupPodGangs(tc.pods)[0]
			wl, err := (&Controller{}).gangWorkload(context.Background(), g)
			if tc.wantErr != nil {
				assertErrNames(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := wl.Annotations[AnnotationPodClaims]; ok != (tc.want != nil) {
				t.Fatalf("annotations %v: claims recorded %v, want %v", wl.Annotations, ok, tc.want != nil)
			}
			back := &api.Workload{PodSets: []api.PodSet{{Name: "main"}}}
			if err := podClaimsOf(wl, back); err != nil {
				t.Fatal(err)
			}
			if got := back.PodSets[0].Claims; !equalClaims(got, tc.want) {
				t.Errorf("claims %+v, want %+v", got, tc.want)
			}
		})
	}
}

func equalClaims(a, b []api.PodClaim) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].ResourceClaimTemplateName != b[i].ResourceClaimTemplateName ||
			a[i].ResourceClaimName != b[i].ResourceClaimName || a[i].Field != b[i].Field ||
			strings.Join(a[i].Containers, ",") != strings.Join(b[i].Containers, ",") {
			return false
		}
	}
	return true
}

// TestDRAPlainPodGangClaims runs a plain pod gang whose pods each have a claim from a
// template: both claims are allocated on the pods' nodes and reserved for them.
func TestDRAPlainPodGangClaims(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-g1"}, "8")
	f.create(gpuTemplate("two", "gpu.nvidia.com", 2))
	f.startController()
	names := []string{"pg-0", "pg-1"}
	for _, n := range names {
		f.create(gangPodWithClaim(n, "train", "2", "two"))
	}
	f.eventually(30*time.Second, "gang bound with its claims", func() (bool, string) {
		n, desc := f.podsBound(names...)
		if n != len(names) {
			return false, desc
		}
		claims := f.claims()
		for _, name := range names {
			var p corev1.Pod
			if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
				return false, err.Error()
			}
			c := claimOfPod(claims, &p)
			if c == nil || c.Status.Allocation == nil || len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].UID != p.UID {
				return false, "pod " + name + ": claim not allocated and reserved for it"
			}
			if got, want := allocatedDevices(c), p.Annotations[AnnotationDevices]; got != want {
				t.Fatalf("claim %s: devices %s, pod %s annotated %s", c.Name, got, name, want)
			}
		}
		return true, desc
	})
	f.assertNoDeviceInTwoClaims()
	wl := f.workload(WorkloadNameForGang(KindPodGang, "train"))
	if wl == nil || wl.Annotations[AnnotationPodClaims] == "" || wl.Status.State != v1alpha1.StateAdmitted {
		t.Errorf("gang workload %+v: want admitted with its claims recorded", wl)
	}
}
