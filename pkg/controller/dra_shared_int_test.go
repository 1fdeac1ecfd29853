package controller

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// sharedGPUClaim is a ResourceClaim for count whole GPUs, for pods to name directly.
func sharedGPUClaim(name string, count int64) *resourcev1.ResourceClaim {
	return &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: gpuTemplate("", "gpu.nvidia.com", count).Spec.Spec}
}

// withSharedClaim makes every container of spec use the ResourceClaim claim, named
// directly as the pod claim "shared".
func withSharedClaim(spec *corev1.PodSpec, claim string) {
	spec.ResourceClaims = append(spec.ResourceClaims, corev1.PodResourceClaim{Name: "shared", ResourceClaimName: ptr.To(claim)})
	for i := range spec.Containers {
		spec.Containers[i].Resources.Claims = append(spec.Containers[i].Resources.Claims, corev1.ResourceClaim{Name: "shared"})
	}
}

// sharingJob is claimJob whose pods also name the ResourceClaim claim.
func sharingJob(name, queue string, pods int32, template, claim string) client.Object {
	job := claimJob(name, queue, pods, template)
	withSharedClaim(&job.(*batchv1.Job).Spec.Template.Spec, claim)
	return job
}

// namedClaim is the namespace's ResourceClaim name (nil: none).
func (f *fixture) namedClaim(name string) *resourcev1.ResourceClaim {
	for _, c := range f.claims() {
		if c.Name == name {
			return &c
		}
	}
	return nil
}

// assertSharedClaim fails unless claim name is allocated once on the node of every pod,
// reserved for each of them (and no other), with its devices in no pod's own claim, and
// every pod annotated with its own claim's devices and, at most, the shared claim's.
func (f *fixture) assertSharedClaim(name string, pods []corev1.Pod) {
	f.t.Helper()
	c := f.namedClaim(name)
	if c == nil || c.Status.Allocation == nil {
		f.t.Fatalf("ResourceClaim %s not allocated: %+v", name, c)
	}
	shared := allocatedDevices(c)
	var reserved, want []string
	for _, r := range c.Status.ReservedFor {
		reserved = append(reserved, string(r.UID))
	}
	claims := f.claims()
	for i := range pods {
		p := &pods[i]
		want = append(want, string(p.UID))
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Pool != p.Spec.NodeName {
				f.t.Errorf("pod %s on %s, its shared claim %s on %s", p.Name, p.Spec.NodeName, name, r.Pool)
			}
		}
		own := ""
		if oc := claimOfPod(claims, p); oc != nil && oc.Status.Allocation != nil {
			own = allocatedDevices(oc)
		}
		got := p.Annotations[AnnotationDevices]
		if got != own && got != joinSorted(own, shared) {
			f.t.Errorf("pod %s annotated %q: want its own claim's devices %q, with the shared claim's %q at most", p.Name, got, own, shared)
		}
	}
	sort.Strings(reserved)
	sort.Strings(want)
	if !slices.Equal(reserved, want) {
		f.t.Errorf("ResourceClaim %s reserved for %v, want the pods %v", name, reserved, want)
	}
	f.assertNoDeviceInTwoClaims()
}

// allocatedBy is the job of the pod among pods whose devices include those of
// ResourceClaim name: the pod that allocated it.
func (f *fixture) allocatedBy(name string, pods []corev1.Pod) string {
	f.t.Helper()
	c := f.namedClaim(name)
	if c == nil || c.Status.Allocation == nil {
		f.t.Fatalf("ResourceClaim %s not allocated", name)
	}
	shared := strings.Split(allocatedDevices(c), ",")
	for _, p := range pods {
		if devs := strings.Split(p.Annotations[AnnotationDevices], ","); slices.Contains(devs, shared[0]) {
			return p.Labels[batchv1.JobNameLabel]
		}
	}
	f.t.Fatalf("no pod has the devices %v of ResourceClaim %s: %s", shared, name, describePods(pods))
	return ""
}

// waitReservedFor waits until ResourceClaim name is reserved for n consumers.
func (f *fixture) waitReservedFor(name string, n int) {
	f.t.Helper()
	f.eventually(30*time.Second, fmt.Sprintf("ResourceClaim %s reserved for %d pods", name, n), func() (bool, string) {
		c := f.namedClaim(name)
		if c == nil {
			return false, "no such claim"
		}
		return len(c.Status.ReservedFor) == n, fmt.Sprintf("%+v", c.Status)
	})
}

// joinSorted joins comma lists of device IDs into one sorted list.
func joinSorted(lists ...string) string {
	var ids []string
	for _, l := range lists {
		if l != "" {
			ids = append(ids, strings.Split(l, ",")...)
		}
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

// TestDRASharedClaimAcrossWorkloads runs Jobs, one workload each, whose pods all name
// one ResourceClaim besides claims of their own: two created at once (likely placed in
// one cycle); a third once the first, whose pod allocated the claim, is done and the
// claim is reserved for the second only (the claim's holder in the cycle state places
// it). The claim is allocated once, every pod runs on its node, it is reserved for the
// pods running, no device in two claims. Once all are done the claim is released and
// its devices go to the next gang, which needs every GPU of the cluster.
func TestDRASharedClaimAcrossWorkloads(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-s1", "dra-s2"}, "16")
	f.create(gpuTemplate("one", "gpu.nvidia.com", 1), gpuTemplate("two", "gpu.nvidia.com", 2),
		gpuTemplate("eight", "gpu.nvidia.com", 8), sharedGPUClaim("data", 1))
	f.startController()
	f.create(sharingJob("one", "lq", 2, "two", "data"), sharingJob("two", "lq", 1, "two", "data"))
	pods := append(f.waitBound("one", 2), f.waitBound("two", 1)...)
	f.waitReservedFor("data", len(pods))
	f.assertSharedClaim("data", pods)

	// The job whose pod allocated the claim (its devices annotated with the claim's) ends.
	first, rest := "one", "two"
	if f.allocatedBy("data", pods) != "one" {
		first, rest = rest, first
	}
	f.finishJob(first)
	f.eventually(30*time.Second, first+" finished", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob(first))
		return wl != nil && meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished), "not finished"
	})
	pods = f.waitBound(rest, map[string]int{"one": 2, "two": 1}[rest])
	f.waitReservedFor("data", len(pods))
	f.create(sharingJob("three", "lq", 1, "one", "data"))
	pods = append(pods, f.waitBound("three", 1)...)
	f.waitReservedFor("data", len(pods))
	f.assertSharedClaim("data", pods)

	f.create(claimJob("whole", "lq", 2, "eight"))
	f.finishJob(rest)
	f.finishJob("three")
	f.eventually(30*time.Second, "data released", func() (bool, string) {
		c := f.namedClaim("data")
		return c != nil && c.Status.Allocation == nil, fmt.Sprintf("%+v", c.Status)
	})
	f.waitClaimsBound("whole", 2)
}

// TestDRAPlainPodGangSharedClaim binds a plain pod gang whose pods name one
// ResourceClaim and a claim of their own each: both pods on the claim's node, the claim
// reserved for both.
func TestDRAPlainPodGangSharedClaim(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-p1", "dra-p2"}, "8")
	f.create(gpuTemplate("two", "gpu.nvidia.com", 2), sharedGPUClaim("data", 1))
	f.startController()
	names := []string{"sg-0", "sg-1"}
	for _, n := range names {
		p := gangPodWithClaim(n, "train", "2", "two")
		withSharedClaim(&p.Spec, "data")
		f.create(p)
	}
	var pods []corev1.Pod
	f.eventually(30*time.Second, "gang bound", func() (bool, string) {
		n, desc := f.podsBound(names...)
		return n == len(names), desc
	})
	f.waitReservedFor("data", len(names))
	for _, n := range names {
		var p corev1.Pod
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: n}, &p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	f.assertSharedClaim("data", pods)
}
