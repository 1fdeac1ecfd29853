package controller

import (
	"strconv"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The test control plane runs no Deployment, ReplicaSet, StatefulSet or LeaderWorkerSet
// controller (kubeenv starts only the Job, garbage-collector, namespace and
// resourceclaim controllers), so these tests create the pods those controllers would:
// with the same names, labels and controller owner references.

// servingPod is a pod a serving controller made from tmpl, controlled by owner.
func (f *fixture) servingPod(name string, tmpl corev1.PodTemplateSpec, owner client.Object, labels map[string]string) {
	f.t.Helper()
	gvk, err := f.c.GroupVersionKindFor(owner)
	if err != nil {
		f.t.Fatal(err)
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{}, Annotations: tmpl.Annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: owner.GetName(),
			UID: owner.GetUID(), Controller: ptr.To(true)}}}, Spec: *tmpl.Spec.DeepCopy()}
	for k, v := range tmpl.Labels {
		p.Labels[k] = v
	}
	for k, v := range labels {
		p.Labels[k] = v
	}
	f.create(p)
}

// deletePod deletes a pod at once, as its controller scaling down and a kubelet would.
func (f *fixture) deletePod(name string) {
	f.t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	if err := client.IgnoreNotFound(f.c.Delete(f.ctx, p, client.GracePeriodSeconds(0))); err != nil {
		f.t.Fatal(err)
	}
}

// podGone reports whether a pod no longer exists or is being deleted (evicted).
func (f *fixture) podGone(name string) bool {
	var p corev1.Pod
	err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p)
	return err != nil || p.DeletionTimestamp != nil
}

func admitted(wl *v1alpha1.Workload) bool {
	return wl != nil && wl.Status.Admission != nil && !meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished)
}

func stateOf(wl *v1alpha1.Workload) string {
	if wl == nil {
		return "no workload"
	}
	return string(wl.Status.State) + ": " + wl.Status.Message
}

// TestServingDeploymentPodsAdmittedOneByOne: a Deployment queued through its pod
// template's label gets one Workload per pod; pods within quota are bound, a pod past
// it waits; scaling down (a pod deleted) removes that pod's Workload, and the freed
// quota admits the waiting pod.
func TestServingDeploymentPodsAdmittedOneByOne(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("dep-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("dep-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "dep-cq").Obj())
	f.startController()
	d := deploymentObj(f.ns, "web", 2, "2", false)
	f.create(d)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: f.ns,
		Labels:          map[string]string{"pod-template-hash": "abc"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(2)), Selector: d.Spec.Selector, Template: d.Spec.Template}}
	f.create(rs)
	hash := map[string]string{"pod-template-hash": "abc"}
	f.servingPod("web-abc-0", d.Spec.Template, rs, hash)
	f.servingPod("web-abc-1", d.Spec.Template, rs, hash)
	f.eventually(20*time.Second, "both Deployment pods admitted and bound", func() (bool, string) {
		n, desc := f.podsBound("web-abc-0", "web-abc-1")
		return n == 2 && admitted(f.workload("pod-web-abc-0")) && admitted(f.workload("pod-web-abc-1")), desc
	})
	wl := f.workload("pod-web-abc-0")
	if wl.Spec.QueueName != "lq" || len(wl.Spec.PodSets) != 1 || wl.Spec.PodSets[0].Count != 1 || wl.Labels[LabelJobKind] != "Deployment" {
		t.Errorf("workload = queue %q pod sets %+v kind %q, want lq, one pod, Deployment", wl.Spec.QueueName, wl.Spec.PodSets, wl.Labels[LabelJobKind])
	}
	f.assertNoDeviceSharedTwice()

	// Scale up past the quota: the third pod's Workload waits, its pod unbound.
	f.servingPod("web-abc-2", d.Spec.Template, rs, hash)
	f.eventually(20*time.Second, "third pod queued", func() (bool, string) {
		wl := f.workload("pod-web-abc-2")
		return wl != nil && wl.Status.State == v1alpha1.StatePending, stateOf(wl)
	})
	if n, desc := f.podsBound("web-abc-2"); n != 0 {
		t.Fatalf("pod past the quota bound: %s", desc)
	}

	// Scale down: the pod goes, its Workload with it, and the waiting pod runs.
	f.deletePod("web-abc-0")
	f.eventually(20*time.Second, "scaled-down pod's workload removed and the waiting pod bound", func() (bool, string) {
		n, desc := f.podsBound("web-abc-2")
		return n == 1 && f.workload("pod-web-abc-0") == nil, desc + " " + stateOf(f.workload("pod-web-abc-0"))
	})
	f.assertNoDeviceSharedTwice()
}

// TestServingStatefulSetGangScaledPreemptedDeleted: a StatefulSet is one gang; scaled
// up, its Workload is re-created at the new size and its pods evicted and placed again
// whole; a higher-priority Job preempts it (its pods evicted, the Workload requeued,
// the recreated pods wait); deleting the StatefulSet deletes its Workload.
func TestServingStatefulSetGangScaledPreemptedDeleted(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("sts-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("sts-cq").Quota("h100", "nvidia.com/gpu", "4").Preemption("LowerPriority", "Never").Obj(),
		k8s.MakeLocalQueue("", "lq", "sts-cq").Obj(), k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()
	sts := statefulSetObj(f.ns, "db", 2, "1")
	sts.Labels["kueue.x-k8s.io/priority-class"] = "low"
	f.create(sts)
	pods := func(n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, "db-"+strconv.Itoa(i))
		}
		return out
	}
	makePods := func(n int) {
		for _, name := range pods(n) {
			f.servingPod(name, sts.Spec.Template, sts, map[string]string{"apps.kubernetes.io/pod-index": name[len("db-"):]})
		}
	}
	f.eventually(20*time.Second, "StatefulSet gang admitted before its pods exist", func() (bool, string) {
		wl := f.workload("statefulset-db")
		return admitted(wl), stateOf(wl)
	})
	makePods(2)
	f.eventually(20*time.Second, "StatefulSet pods bound", func() (bool, string) {
		n, desc := f.podsBound(pods(2)...)
		return n == 2, desc
	})

	// Scale up: the gang is re-created at three pods and placed again whole.
	oldUID := f.workload("statefulset-db").UID
	if err := f.c.Get(f.ctx, client.ObjectKeyFromObject(sts), sts); err != nil {
		t.Fatal(err)
	}
	sts.Spec.Replicas = ptr.To(int32(3))
	if err := f.c.Update(f.ctx, sts); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "gang re-created at 3 pods, old pods evicted", func() (bool, string) {
		wl := f.workload("statefulset-db")
		if wl == nil || wl.UID == oldUID {
			return false, "old workload still there"
		}
		return wl.Spec.PodSets[0].Count == 3 && f.podGone("db-0") && f.podGone("db-1"), stateOf(wl)
	})
	f.eventually(20*time.Second, "evicted pods gone", func() (bool, string) {
		var list corev1.PodList
		_ = f.c.List(f.ctx, &list, client.InNamespace(f.ns))
		return len(list.Items) == 0, describePods(list.Items)
	})
	makePods(3)
	f.eventually(20*time.Second, "scaled gang bound whole", func() (bool, string) {
		n, desc := f.podsBound(pods(3)...)
		return n == 3, desc
	})
	f.assertNoDeviceSharedTwice()

	// Preemption: the serving pods are evicted, the gang requeued.
	f.create(k8s.MakeJob("", "high").Queue("lq").Priority("high").Pods(1).GPUs("4").Obj())
	f.eventually(30*time.Second, "StatefulSet preempted: evicted and requeued", func() (bool, string) {
		wl := f.workload("statefulset-db")
		ev := meta.FindStatusCondition(wl.Status.Conditions, v1alpha1.WorkloadEvicted)
		return ev != nil && ev.Status == metav1.ConditionTrue && wl.Status.Admission == nil && f.podGone("db-0"), stateOf(wl)
	})
	f.waitBound("high", 1)
	f.eventually(20*time.Second, "evicted pods gone", func() (bool, string) {
		n := 0
		for _, name := range pods(3) {
			if !f.podGone(name) {
				n++
			}
		}
		return n == 0, strconv.Itoa(n) + " left"
	})
	makePods(3) // recreated by their controller: they wait for the gang's admission
	if n, desc := f.podsBound(pods(3)...); n != 0 || f.workload("statefulset-db").Status.Admission != nil {
		t.Errorf("pods of the preempted gang bound while the high Job runs: %s", desc)
	}

	// Deleting the StatefulSet deletes its Workload (owner reference).
	if err := f.c.Delete(f.ctx, sts, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	f.eventually(30*time.Second, "StatefulSet's workload deleted", func() (bool, string) {
		wl := f.workload("statefulset-db")
		return wl == nil, stateOf(wl)
	})
}

// TestServingLeaderWorkerSetGroups: each LeaderWorkerSet group is a gang of its own
// (a CPU leader and GPU workers): the first group fits and is bound whole, the second
// waits for quota; scaling to one group removes the second group's Workload.
func TestServingLeaderWorkerSetGroups(t *testing.T) {
	f := newFixture(t)
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("leaderworkerset.x-k8s.io", "v1", "LeaderWorkerSet")); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("lws-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("lws-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "lws-cq").Obj())
	f.startController()
	lws := lwsObj(f.ns, "lws", 2, 3, "2", true)
	unstructured.RemoveNestedField(lws.Object, "metadata", "uid")
	if err := f.c.Create(f.ctx, lws); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "one gang per group, the first admitted", func() (bool, string) {
		g0, g1 := f.workload("leaderworkerset-lws-0"), f.workload("leaderworkerset-lws-1")
		return admitted(g0) && g1 != nil && g1.Status.Admission == nil, stateOf(g0) + " / " + stateOf(g1)
	})
	g0 := f.workload("leaderworkerset-lws-0")
	if len(g0.Spec.PodSets) != 2 || g0.Spec.PodSets[0].Name != "leader" || g0.Spec.PodSets[1].Count != 2 {
		t.Errorf("group pod sets = %+v, want leader 1 and worker 2", g0.Spec.PodSets)
	}
	leader := servingTemplate("0", nil)
	worker := servingTemplate("2", nil)
	group := func(g string) []string {
		names := []string{"lws-" + g, "lws-" + g + "-1", "lws-" + g + "-2"}
		for i, name := range names {
			tmpl := worker
			if i == 0 {
				tmpl = leader
			}
			f.servingPod(name, tmpl, lws, map[string]string{lwsNameLabel: "lws", lwsGroupIndexLabel: g, lwsWorkerIndexLabel: strconv.Itoa(i)})
		}
		return names
	}
	first := group("0")
	f.eventually(20*time.Second, "first group bound whole", func() (bool, string) {
		n, desc := f.podsBound(first...)
		return n == 3, desc
	})
	var lp corev1.Pod
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "lws-0"}, &lp); err != nil {
		t.Fatal(err)
	}
	if lp.Annotations[AnnotationPodSlot] != "leader-0" {
		t.Errorf("leader pod slot = %q, want leader-0", lp.Annotations[AnnotationPodSlot])
	}
	second := group("1")
	if n, desc := f.podsBound(second...); n != 0 {
		t.Errorf("second group bound past the quota: %s", desc)
	}
	f.assertNoDeviceSharedTwice()

	// Scale to one group: the second group's Workload is removed.
	if err := unstructured.SetNestedField(lws.Object, int64(1), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.Update(f.ctx, lws); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "second group's workload removed", func() (bool, string) {
		wl := f.workload("leaderworkerset-lws-1")
		return wl == nil && admitted(f.workload("leaderworkerset-lws-0")), stateOf(wl)
	})
}

// TestServingDeploymentPodPreemptedAndReplaced: a higher-priority Job preempts a
// Deployment's pod: the pod is evicted, its Workload dropped with it; the pod its
// ReplicaSet makes in its place queues as a new Workload and runs once the Job is done.
func TestServingDeploymentPodPreemptedAndReplaced(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("dpre-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("dpre-cq").Quota("h100", "nvidia.com/gpu", "4").Preemption("LowerPriority", "Never").Obj(),
		k8s.MakeLocalQueue("", "lq", "dpre-cq").Obj(), k8s.MakePriorityClass("low", 10).Obj(), k8s.MakePriorityClass("high", 1000).Obj())
	f.startController()
	d := deploymentObj(f.ns, "web", 1, "4", true)
	d.Labels["kueue.x-k8s.io/priority-class"] = "low"
	f.create(d)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: f.ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: d.Spec.Selector, Template: d.Spec.Template}}
	f.create(rs)
	hash := map[string]string{"pod-template-hash": "abc"}
	f.servingPod("web-abc-0", d.Spec.Template, rs, hash)
	f.eventually(20*time.Second, "Deployment pod bound", func() (bool, string) {
		n, desc := f.podsBound("web-abc-0")
		return n == 1, desc
	})

	f.create(k8s.MakeJob("", "high").Queue("lq").Priority("high").Pods(1).GPUs("4").Obj())
	f.eventually(30*time.Second, "pod evicted and its workload dropped", func() (bool, string) {
		return f.podGone("web-abc-0") && f.workload("pod-web-abc-0") == nil, stateOf(f.workload("pod-web-abc-0"))
	})
	f.waitBound("high", 1)
	f.servingPod("web-abc-1", d.Spec.Template, rs, hash) // the ReplicaSet's replacement
	f.eventually(20*time.Second, "replacement queued", func() (bool, string) {
		wl := f.workload("pod-web-abc-1")
		return wl != nil && wl.Spec.PriorityClassName == "low" && wl.Status.Admission == nil, stateOf(wl)
	})
	f.finishJob("high")
	f.eventually(30*time.Second, "replacement bound once the Job is done", func() (bool, string) {
		n, desc := f.podsBound("web-abc-1")
		return n == 1, desc
	})
	f.assertNoDeviceSharedTwice()
}
