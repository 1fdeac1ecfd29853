package controller

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// gpuClass is NVIDIA's GPU DeviceClass: whole GPUs of the driver.
func gpuClass(name string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}}}}}
}

// gpuTemplate asks for count whole GPUs of class.
func gpuTemplate(name, class string, count int64) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}}}}}}}
}

// claimJob is a Job whose pods ask for their GPUs through a claim from template.
func claimJob(name, queue string, pods int32, template string) client.Object {
	job := k8s.MakeJob("", name).Queue(queue).Pods(pods).Obj()
	spec := &job.Spec.Template.Spec
	spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(template)}}
	for i := range spec.Containers {
		spec.Containers[i].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	return job
}

// draWorld creates the DeviceClass (removed after the test: it is cluster-scoped),
// nodes, a flavor, a ClusterQueue with gpus of nvidia.com/gpu quota and LocalQueue "lq".
func (f *fixture) draWorld(nodes []string, gpus string) {
	f.t.Helper()
	class := gpuClass("gpu.nvidia.com")
	_ = f.c.Delete(f.ctx, class.DeepCopy())
	f.create(class)
	f.t.Cleanup(func() { _ = f.c.Delete(context.Background(), gpuClass("gpu.nvidia.com")) })
	for _, n := range nodes {
		f.create(k8s.MakeNode(n).H100(8).Obj())
	}
	f.create(k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue("dra-cq").Quota("h100", "nvidia.com/gpu", gpus).Obj(),
		k8s.MakeLocalQueue("", "lq", "dra-cq").Obj())
	f.t.Cleanup(func() {
		_ = f.c.Delete(context.Background(), &v1alpha1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "dra-cq"}})
	})
}

// claims lists the namespace's ResourceClaims by name.
func (f *fixture) claims() []resourcev1.ResourceClaim {
	var list resourcev1.ResourceClaimList
	if err := f.c.List(f.ctx, &list, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// assertNoDeviceInTwoClaims fails when two allocated claims hold one device.
func (f *fixture) assertNoDeviceInTwoClaims() {
	f.t.Helper()
	held := map[string]string{}
	for _, c := range f.claims() {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			key := r.Pool + "/" + r.Device
			if other, dup := held[key]; dup {
				f.t.Errorf("device %s allocated to both %s and %s", key, other, c.Name)
			}
			held[key] = c.Name
		}
	}
}

// claimOfPod is the claim a pod's resourceclaim controller made for it (nil: none).
func claimOfPod(claims []resourcev1.ResourceClaim, pod *corev1.Pod) *resourcev1.ResourceClaim {
	for i := range claims {
		if metav1.IsControlledBy(&claims[i], pod) {
			return &claims[i]
		}
	}
	return nil
}

// allocatedDevices are the Gantry device IDs of a claim's allocation, as the pod's
// device annotation lists them ("GPU-0,GPU-1"): DRA names are gpu-<index>.
func allocatedDevices(c *resourcev1.ResourceClaim) string {
	var ids []string
	for _, r := range c.Status.Allocation.Devices.Results {
		ids = append(ids, "GPU-"+strings.TrimPrefix(r.Device, "gpu-"))
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

// writeOrder watches the namespace's claims and pods and records the resourceVersion
// at which each claim first showed an allocation reserved for a pod, and at which each
// pod was first bound: resource versions of one etcd order all writes.
type writeOrder struct {
	mu        sync.Mutex
	allocated map[string]int64 // claim -> resourceVersion
	bound     map[string]int64 // pod -> resourceVersion
}

func (f *fixture) watchWriteOrder() *writeOrder {
	f.t.Helper()
	wc, err := client.NewWithWatch(rest.CopyConfig(testEnv.Config), client.Options{Scheme: f.c.Scheme()})
	if err != nil {
		f.t.Fatal(err)
	}
	o := &writeOrder{allocated: map[string]int64{}, bound: map[string]int64{}}
	for _, list := range []client.ObjectList{&resourcev1.ResourceClaimList{}, &corev1.PodList{}} {
		if err := wc.List(f.ctx, list, client.InNamespace(f.ns)); err != nil {
			f.t.Fatal(err)
		}
		go o.follow(f.ctx, wc, list, f.ns, list.GetResourceVersion())
	}
	return o
}

// follow records every change after resourceVersion rv until ctx ends. A watch the API
// server refuses (its watch cache of a kind nobody listed yet is behind) is started
// again from the last version seen, so nothing is missed.
func (o *writeOrder) follow(ctx context.Context, wc client.WithWatch, list client.ObjectList, ns, rv string) {
	for ctx.Err() == nil {
		w, err := wc.Watch(ctx, list, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
		if err == nil {
			rv = o.record(w, rv)
			w.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// record takes events until the watch ends or fails; it returns the last version seen.
func (o *writeOrder) record(w watch.Interface, rv string) string {
	for ev := range w.ResultChan() {
		obj, ok := ev.Object.(client.Object)
		if !ok || ev.Type == watch.Error {
			return rv
		}
		rv = obj.GetResourceVersion()
		n, _ := strconv.ParseInt(rv, 10, 64)
		o.mu.Lock()
		switch x := obj.(type) {
		case *resourcev1.ResourceClaim:
			if _, seen := o.allocated[x.Name]; !seen && x.Status.Allocation != nil && len(x.Status.ReservedFor) > 0 {
				o.allocated[x.Name] = n
			}
		case *corev1.Pod:
			if _, seen := o.bound[x.Name]; !seen && x.Spec.NodeName != "" {
				o.bound[x.Name] = n
			}
		}
		o.mu.Unlock()
	}
	return rv
}

// check fails unless want claims were allocated and every one before any binding.
func (o *writeOrder) check(t *testing.T, want int) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.allocated) != want || len(o.bound) == 0 {
		t.Fatalf("saw %d claims allocated (want %d) and %d pods bound", len(o.allocated), want, len(o.bound))
	}
	lastClaim, firstBind := int64(0), int64(1<<62)
	for _, rv := range o.allocated {
		lastClaim = max(lastClaim, rv)
	}
	for _, rv := range o.bound {
		firstBind = min(firstBind, rv)
	}
	if lastClaim >= firstBind {
		t.Errorf("a claim was written at resourceVersion %d, after the first Binding at %d: %v / %v", lastClaim, firstBind, o.allocated, o.bound)
	}
}

// waitClaimsBound waits until the job's pods are all bound and each has its claim
// allocated on its node and reserved for it; it returns the pods.
func (f *fixture) waitClaimsBound(job string, pods int) []corev1.Pod {
	f.t.Helper()
	bound := f.waitBound(job, pods)
	claims := f.claims()
	for i := range bound {
		p := &bound[i]
		c := claimOfPod(claims, p)
		switch {
		case c == nil:
			f.t.Fatalf("pod %s: no claim", p.Name)
		case c.Status.Allocation == nil:
			f.t.Fatalf("pod %s bound with claim %s not allocated", p.Name, c.Name)
		case len(c.Status.ReservedFor) != 1 || c.Status.ReservedFor[0].UID != p.UID:
			f.t.Fatalf("claim %s: reservedFor %v, want pod %s", c.Name, c.Status.ReservedFor, p.Name)
		case !slices.Contains(c.Finalizers, resourcev1.Finalizer):
			f.t.Errorf("claim %s: no %s finalizer", c.Name, resourcev1.Finalizer)
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Pool != p.Spec.NodeName || r.Driver != "gpu.nvidia.com" {
				f.t.Errorf("claim %s: device %s/%s of driver %s, pod on %s", c.Name, r.Pool, r.Device, r.Driver, p.Spec.NodeName)
			}
		}
		if got, want := allocatedDevices(c), p.Annotations[AnnotationDevices]; got != want {
			f.t.Errorf("claim %s: devices %s, pod %s annotated %s", c.Name, got, p.Name, want)
		}
	}
	f.assertNoDeviceInTwoClaims()
	return bound
}

// TestDRAGangClaimsAllocatedBeforeBinding runs a gang whose pods each have a claim
// from a ResourceClaimTemplate: every claim is allocated and reserved for its pod
// before any pod is bound, with the devices of the pod's slot; deleting the job's pods
// deallocates the claims, and their devices go to the next gang.
func TestDRAGangClaimsAllocatedBeforeBinding(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-a1", "dra-a2"}, "16")
	f.create(gpuTemplate("four", "gpu.nvidia.com", 4))
	order := f.watchWriteOrder()
	f.startController()
	f.create(claimJob("train", "lq", 4, "four"))
	f.waitClaimsBound("train", 4)
	order.check(t, 4)

	// The whole cluster is taken: the next gang waits until train's pods are gone.
	f.create(claimJob("next", "lq", 2, "four"))
	f.finishJob("train")
	f.eventually(30*time.Second, "train's claims released", func() (bool, string) {
		var held []string
		for _, c := range f.claims() {
			if c.Status.Allocation != nil && strings.HasPrefix(c.Name, "train-") {
				held = append(held, c.Name)
			}
		}
		return len(held) == 0, fmt.Sprint("still allocated: ", held)
	})
	f.waitClaimsBound("next", 2)
}

// TestDRAGangAllOrNothing gives a gang of three 4-GPU pods one 8-GPU node: it stays
// pending and no claim of it is allocated, no pod bound.
func TestDRAGangAllOrNothing(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-b1"}, "64")
	f.create(gpuTemplate("four", "gpu.nvidia.com", 4))
	f.startController()
	f.create(claimJob("big", "lq", 3, "four"))
	f.eventually(30*time.Second, "big pending with a placement reason", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("big"))
		if wl == nil {
			return false, "no workload"
		}
		return wl.Status.State == v1alpha1.StatePending && wl.Status.Reason != "" && wl.Status.Reason != ReasonInvalid,
			string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message
	})
	for _, c := range f.claims() {
		if c.Status.Allocation != nil {
			t.Errorf("claim %s allocated for a gang that does not fit", c.Name)
		}
	}
	if pods := f.jobPods("big"); boundCount(pods) != 0 {
		t.Errorf("pods bound: %s", describePods(pods))
	}
}

// TestDRAMissingDeviceClass asks for a class that does not exist: the gang stays
// pending with a reason naming the claim and the class; created, the gang runs.
func TestDRAMissingDeviceClass(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-c1"}, "8")
	f.create(gpuTemplate("odd", "gpu-missing.example.com", 1))
	f.startController()
	f.create(claimJob("lost", "lq", 1, "odd"))
	f.eventually(30*time.Second, "lost pending naming the class", func() (bool, string) {
		wl := f.workload(WorkloadNameForJob("lost"))
		if wl == nil {
			return false, "no workload"
		}
		return wl.Status.State == v1alpha1.StatePending && strings.Contains(wl.Status.Message, "gpu-missing.example.com") &&
			strings.Contains(wl.Status.Message, `"gpu"`), string(wl.Status.State) + " " + wl.Status.Reason + ": " + wl.Status.Message
	})
	class := gpuClass("gpu-missing.example.com")
	f.create(class)
	t.Cleanup(func() { _ = f.c.Delete(context.Background(), gpuClass("gpu-missing.example.com")) })
	f.waitClaimsBound("lost", 1)
}

// TestDRASameAsExtendedResources asks for the same gang through nvidia.com/gpu limits
// and through claims, one after the other on the same nodes, each under a fresh
// controller: same nodes, same devices. Both runs use one namespace and one job name
// because ties between equally scored nodes are broken by a source keyed by the
// workload's namespace and job (engine.TieBreak), as in the simulator: gangs of
// different namespaces may land differently, and that is no disagreement.
func TestDRASameAsExtendedResources(t *testing.T) {
	f := newFixture(t)
	f.draWorld([]string{"dra-d1", "dra-d2"}, "16")
	f.create(gpuTemplate("three", "gpu.nvidia.com", 3))
	placements := map[string]string{}
	for _, mode := range []string{"extended", "claims"} {
		f.startController()
		job := claimJob("same", "lq", 3, "three")
		if mode == "extended" {
			job = k8s.MakeJob("", "same").Queue("lq").Pods(3).GPUs("3").Obj()
		}
		f.create(job)
		var pods []corev1.Pod
		if mode == "extended" {
			pods = f.waitBound("same", 3)
		} else {
			pods = f.waitClaimsBound("same", 3)
		}
		var got []string
		for _, p := range pods {
			got = append(got, p.Spec.NodeName+"["+p.Annotations[AnnotationDevices]+"]")
		}
		sort.Strings(got)
		placements[mode] = strings.Join(got, " ")
		f.stopController()
		if mode == "extended" {
			f.removeJob("same")
		}
	}
	if placements["extended"] != placements["claims"] {
		t.Errorf("extended resources placed %s, claims %s", placements["extended"], placements["claims"])
	}
}

// removeJob deletes a job of claimless pods with its Workload and pods (forced, as a
// kubelet would let them go) and waits until all are gone, so a job of the same name
// can start afresh. The controller is stopped meanwhile.
func (f *fixture) removeJob(name string) {
	f.t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name}}
	wl := &v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: WorkloadNameForJob(name)}}
	for _, o := range []client.Object{job, wl} {
		if err := f.c.Delete(f.ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			f.t.Fatal(err)
		}
	}
	f.eventually(30*time.Second, "job "+name+" gone", func() (bool, string) {
		var pods corev1.PodList
		if err := f.c.List(f.ctx, &pods, client.InNamespace(f.ns), client.MatchingLabels{batchv1.JobNameLabel: name}); err != nil {
			return false, err.Error()
		}
		for i := range pods.Items {
			forceDelete(f.ctx, f.c, &pods.Items[i])
		}
		jobErr := f.c.Get(f.ctx, client.ObjectKeyFromObject(job), &batchv1.Job{})
		wlErr := f.c.Get(f.ctx, client.ObjectKeyFromObject(wl), &v1alpha1.Workload{})
		return len(pods.Items) == 0 && apierrors.IsNotFound(jobErr) && apierrors.IsNotFound(wlErr),
			fmt.Sprintf("%d pods; job: %v; workload: %v", len(pods.Items), jobErr, wlErr)
	})
}

// TestDRARestartMidGang stops the controller after the gang's claims were written
// but before any pod was bound (its identity may not bind), then:
//   - with the admission kept, a controller that may bind completes the gang;
//   - with the admission gone and the gang not admissible, the claims are released.
//
// Either way no device is in two claims and no gang is left half-allocated.
func TestDRARestartMidGang(t *testing.T) {
	for _, admitted := range []bool{true, false} {
		t.Run(map[bool]string{true: "completed", false: "released"}[admitted], func(t *testing.T) {
			f := newFixture(t)
			f.draWorld([]string{"dra-e1"}, "8")
			f.create(gpuTemplate("two", "gpu.nvidia.com", 2))
			f.startControllerAs(f.identityWithout("pods/binding"))
			f.create(claimJob("mid", "lq", 3, "two"))
			f.eventually(30*time.Second, "every claim of mid written, no pod bound", func() (bool, string) {
				n := 0
				for _, c := range f.claims() {
					if c.Status.Allocation != nil {
						n++
					}
				}
				pods := f.jobPods("mid")
				return n == 3 && boundCount(pods) == 0, fmt.Sprintf("%d claims allocated; pods %s", n, describePods(pods))
			})
			f.stopController()
			f.assertNoDeviceInTwoClaims()
			if admitted {
				f.startController()
				f.waitClaimsBound("mid", 3)
				return
			}
			// The admission goes (as an eviction would leave it) and the queue with it,
			// so the gang cannot be admitted again.
			_ = f.c.Delete(f.ctx, &v1alpha1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "lq"}})
			wl := f.workload(WorkloadNameForJob("mid"))
			wl.Status.Admission = nil
			wl.Status.State = v1alpha1.StatePending
			if err := f.c.Status().Update(f.ctx, wl); err != nil {
				t.Fatal(err)
			}
			f.startController()
			f.eventually(30*time.Second, "mid's claims released", func() (bool, string) {
				var held []string
				for _, c := range f.claims() {
					if c.Status.Allocation != nil || len(c.Status.ReservedFor) > 0 || slices.Contains(c.Finalizers, resourcev1.Finalizer) {
						held = append(held, c.Name)
					}
				}
				return len(held) == 0, fmt.Sprint("still held: ", held)
			})
			if pods := f.jobPods("mid"); boundCount(pods) != 0 {
				t.Errorf("pods bound: %s", describePods(pods))
			}
		})
	}
}

// identityWithout is shippedIdentity with a role lacking the given resource (say,
// "pods/binding"): a controller that writes claims and admissions but cannot bind,
// to stop it between the two.
func (f *fixture) identityWithout(resource string) *rest.Config {
	f.t.Helper()
	data, err := os.ReadFile("../../config/rbac/role.yaml")
	if err != nil {
		f.t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		f.t.Fatal(err)
	}
	role.Name = "gantry-controller-limited"
	for i := range role.Rules {
		role.Rules[i].Resources = slices.DeleteFunc(role.Rules[i].Resources, func(r string) bool { return r == resource })
	}
	role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return len(r.Resources) == 0 })
	_ = f.c.Delete(f.ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role.Name}})
	f.create(&role)
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "gantry-limited", Namespace: f.ns}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{sa}}
	_ = f.c.Delete(f.ctx, binding.DeepCopy())
	f.create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa.Name}}, binding)
	f.t.Cleanup(func() {
		_ = f.c.Delete(context.Background(), &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}})
		_ = f.c.Delete(context.Background(), &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role.Name}})
	})
	cfg := rest.CopyConfig(testEnv.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + f.ns + ":" + sa.Name}
	return cfg
}
