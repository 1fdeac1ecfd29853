package controller

import (
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestNodeLostRequeuesGang: a 2-pod gang runs on two of three 4-GPU nodes; one of its
// nodes goes away (deleted, NotReady past the grace period, or tainted NoExecute). The
// whole gang is evicted with reason NodeLost and an event naming the node, requeued,
// and admitted again on the two nodes left, never on the lost one; the Job counts no
// failure for it (it was suspended, not killed).
func TestNodeLostRequeuesGang(t *testing.T) {
	cases := []struct {
		name string
		lose func(f *fixture, node string)
		text string // in the event
	}{
		{"deleted", func(f *fixture, node string) {
			if err := f.c.Delete(f.ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
				f.t.Fatal(err)
			}
		}, "was deleted"},
		{"notready", func(f *fixture, node string) {
			f.patchNodeStatus(node, func(n *corev1.Node) {
				n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
					Reason: "KubeletNotReady", LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()}}
			})
		}, "has not been Ready for"},
		{"noexecute", func(f *fixture, node string) {
			f.patchNode(node, func(n *corev1.Node) {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Value: "true", Effect: corev1.TaintEffectNoExecute})
			})
		}, "maintenance=true:NoExecute"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.tune = func(o *Options) { o.NodeLostAfter = 2 * time.Second }
			prefix := "nl" + string(rune('a'+i))
			nodes := []string{prefix + "-1", prefix + "-2", prefix + "-3"}
			for _, n := range nodes {
				f.create(k8s.MakeNode(n).H100(4).Obj())
			}
			cq := prefix + "-cq"
			f.create(k8s.MakeFlavor("h100").Obj(), k8s.MakeClusterQueue(cq).Quota("h100", "nvidia.com/gpu", "12").Obj(),
				k8s.MakeLocalQueue("", "lq", cq).Obj())
			f.startController()
			f.create(k8s.MakeJob("", "train").Queue("lq").Pods(2).GPUs("4").Obj())
			lost := f.waitBound("train", 2)[0].Spec.NodeName

			c.lose(f, lost)
			f.eventually(30*time.Second, "gang evicted for the lost node", func() (bool, string) {
				return f.hasEvent(WorkloadNameForJob("train"), ReasonEvicted, c.text), "no eviction event"
			})
			var pods []corev1.Pod
			f.eventually(40*time.Second, "readmitted on the nodes left", func() (bool, string) {
				pods = f.jobPods("train")
				if len(pods) != 2 || boundCount(pods) != 2 {
					return false, describePods(pods)
				}
				for _, p := range pods {
					if p.Spec.NodeName == lost {
						return false, "a pod bound to the lost node: " + describePods(pods)
					}
				}
				return true, ""
			})
			wl := f.workload(WorkloadNameForJob("train"))
			ev := wl.Status.RequeueState
			if ev == nil || ev.Count == nil || *ev.Count != 1 {
				t.Errorf("requeue state %+v, want one requeue", ev)
			}
			for _, p := range wl.Status.Admission.Placements {
				if p.Node == lost {
					t.Errorf("readmitted onto the lost node %s: %+v", lost, wl.Status.Admission.Placements)
				}
			}
			var job batchv1.Job
			if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "train"}, &job); err != nil {
				t.Fatal(err)
			}
			if job.Status.Failed != 0 {
				t.Errorf("job counted %d failed pods; the eviction must not count against backoffLimit", job.Status.Failed)
			}
			f.assertNoDeviceSharedTwice()
		})
	}
}

// TestNodeNotReadyWithinGraceKeepsGang: a node NotReady for less than the grace period
// (a kubelet restart) does not disturb the gang on it.
func TestNodeNotReadyWithinGraceKeepsGang(t *testing.T) {
	f := newFixture(t)
	f.tune = func(o *Options) { o.NodeLostAfter = time.Hour }
	f.create(k8s.MakeNode("nlg-1").H100(4).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("nlg-cq").Quota("h100", "nvidia.com/gpu", "4").Obj(), k8s.MakeLocalQueue("", "lq", "nlg-cq").Obj())
	f.startController()
	f.create(k8s.MakeJob("", "train").Queue("lq").Pods(1).GPUs("4").Obj())
	f.waitBound("train", 1)
	f.patchNodeStatus("nlg-1", func(n *corev1.Node) {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "KubeletNotReady", LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()}}
	})
	f.pokePasses(3)
	wl := f.workload(WorkloadNameForJob("train"))
	if wl.Status.Admission == nil || f.hasEvent(WorkloadNameForJob("train"), ReasonEvicted, "") {
		t.Errorf("gang disturbed within the grace period: %s %s", wl.Status.State, wl.Status.Message)
	}
}

// patchNode and patchNodeStatus change a node as its kubelet or an operator would.
func (f *fixture) patchNode(name string, change func(*corev1.Node)) {
	f.t.Helper()
	var n corev1.Node
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: name}, &n); err != nil {
		f.t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	change(&n)
	if err := f.c.Patch(f.ctx, &n, patch); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) patchNodeStatus(name string, change func(*corev1.Node)) {
	f.t.Helper()
	var n corev1.Node
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: name}, &n); err != nil {
		f.t.Fatal(err)
	}
	change(&n)
	if err := f.c.Status().Update(f.ctx, &n); err != nil {
		f.t.Fatal(err)
	}
}
