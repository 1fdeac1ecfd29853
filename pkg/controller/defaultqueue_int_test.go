package controller

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/manifest"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDefaultLocalQueue: in a namespace with a LocalQueue named "default", a Job created
// without a queue label is labelled for it and suspended by the webhook, then admitted
// and bound; a Job that is part of a JobSet is left alone (its JobSet is the one
// queued); a JobSet without a queue label gets a Workload in the default queue and runs
// once admitted, its own labels unchanged.
func TestDefaultLocalQueue(t *testing.T) {
	f := newFixture(t)
	host, port := freeHostPort(t)
	caPEM, certDir := webhookCerts(t, host)
	f.manager = func(o *ManagerOptions) { o.WebhookHost, o.WebhookPort, o.WebhookCertDir = host, port, certDir }
	if err := testEnv.CreateCRDs(f.ctx, minimalCRD("jobset.x-k8s.io", "v1alpha2", "JobSet")); err != nil {
		t.Fatal(err)
	}
	f.create(k8s.MakeNode("dq-1").H100(8).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("dq-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(),
		k8s.MakeLocalQueue("", manifest.DefaultLocalQueue, "dq-cq").Obj())
	f.startController()
	f.webhookConfigs(caPEM, "https://"+net.JoinHostPort(host, strconv.Itoa(port)))

	// The API server calls the webhook once it serves, and the webhook finds the
	// LocalQueue once its cache has it: create Jobs until one comes out defaulted.
	var job string
	attempt := 0
	f.eventually(20*time.Second, "a Job without a queue label put in LocalQueue default", func() (bool, string) {
		attempt++
		j := k8s.MakeJob(f.ns, fmt.Sprintf("unlabelled-%d", attempt)).Pods(1).GPUs("4").Obj()
		j.Labels, j.Spec.Suspend = nil, nil
		if err := f.c.Create(f.ctx, j); err != nil {
			return false, err.Error()
		}
		if !ptr.Deref(j.Spec.Suspend, false) || j.Labels[api.LabelKueueQueueName] != manifest.DefaultLocalQueue {
			_ = f.c.Delete(f.ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground))
			return false, fmt.Sprintf("suspend %v, labels %v", j.Spec.Suspend, j.Labels)
		}
		job = j.Name
		return true, ""
	})
	f.waitBound(job, 1)
	if wl := f.workload(WorkloadNameForJob(job)); wl == nil || wl.Spec.QueueName != manifest.DefaultLocalQueue {
		t.Errorf("workload of %s: %+v, want one in LocalQueue default", job, wl)
	}

	part := k8s.MakeJob(f.ns, "part-of-a-jobset").Pods(1).Obj()
	part.Labels, part.Spec.Suspend = nil, nil
	part.OwnerReferences = []metav1.OwnerReference{{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet", Name: "owner",
		UID: "uid-owner", Controller: ptr.To(true)}}
	if err := f.c.Create(f.ctx, part); err != nil || ptr.Deref(part.Spec.Suspend, false) || part.Labels[api.LabelKueueQueueName] != "" {
		t.Errorf("a JobSet's Job: %v, suspend %v, labels %v; want it left alone", err, part.Spec.Suspend, part.Labels)
	}

	js := jobSetObj(f.ns, replicatedJob("workers", 1, 1, "4"))
	js.SetLabels(nil)
	if err := f.c.Create(f.ctx, js); err != nil {
		t.Fatal(err)
	}
	f.eventually(20*time.Second, "a JobSet without a queue label admitted from LocalQueue default", func() (bool, string) {
		wl := f.workload("jobset-js")
		if wl == nil {
			return false, "no workload"
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(js.GroupVersionKind())
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "js"}, u); err != nil {
			return false, err.Error()
		}
		s, found, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
		if len(u.GetLabels()) != 0 {
			t.Fatalf("the JobSet's labels were changed: %v", u.GetLabels())
		}
		return wl.Spec.QueueName == manifest.DefaultLocalQueue && wl.Status.Admission != nil && found && !s,
			fmt.Sprintf("queue %q, %s: %s", wl.Spec.QueueName, wl.Status.State, wl.Status.Message)
	})
}

// TestPartOfQueuedJob: an object whose controller is a job of a kind Gantry queues is
// part of that job, not a job of its own; other owners do not count.
func TestPartOfQueuedJob(t *testing.T) {
	ref := func(apiVersion, kind string, controller bool) metav1.OwnerReference {
		return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "o", Controller: ptr.To(controller)}
	}
	cases := []struct {
		name string
		refs []metav1.OwnerReference
		want bool
	}{
		{"no owner", nil, false},
		{"a JobSet's Job", []metav1.OwnerReference{ref("jobset.x-k8s.io/v1alpha2", "JobSet", true)}, true},
		{"a TrainJob's JobSet", []metav1.OwnerReference{ref("trainer.kubeflow.org/v1alpha1", "TrainJob", true)}, true},
		{"a RayJob's submitter Job", []metav1.OwnerReference{ref("ray.io/v1", "RayJob", true)}, true},
		{"a Job's child", []metav1.OwnerReference{ref("batch/v1", "Job", true)}, true},
		{"a CronJob's Job", []metav1.OwnerReference{ref("batch/v1", "CronJob", true)}, false},
		{"a JobSet owner that is not the controller", []metav1.OwnerReference{ref("jobset.x-k8s.io/v1alpha2", "JobSet", false)}, false},
		{"a kind of the same name in another version", []metav1.OwnerReference{ref("jobset.x-k8s.io/v1", "JobSet", true)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := partOfQueuedJob(tc.refs); got != tc.want {
				t.Errorf("partOfQueuedJob = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDefaultLocalQueueWithoutWebhook: with no webhook to label it, a Job without a
// queue label in a namespace with LocalQueue "default" is still queued there (read as
// labelled, its own labels unchanged), admitted, resumed and bound.
func TestDefaultLocalQueueWithoutWebhook(t *testing.T) {
	f := newFixture(t)
	f.create(k8s.MakeNode("dqn-1").H100(8).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("dqn-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(),
		k8s.MakeLocalQueue("", manifest.DefaultLocalQueue, "dqn-cq").Obj())
	j := k8s.MakeJob(f.ns, "unlabelled").Pods(1).GPUs("4").Obj()
	j.Labels = nil
	f.create(j)
	f.startController()
	f.waitBound("unlabelled", 1)
	if wl := f.workload(WorkloadNameForJob("unlabelled")); wl == nil || wl.Spec.QueueName != manifest.DefaultLocalQueue {
		t.Errorf("workload: %+v, want one in LocalQueue default", wl)
	}
	var cur batchv1.Job
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: "unlabelled"}, &cur); err != nil {
		t.Fatal(err)
	}
	if JobQueueName(&cur.ObjectMeta) != "" || ptr.Deref(cur.Spec.Suspend, true) {
		t.Errorf("job labels %v suspend %v: want no queue label added, running", cur.Labels, ptr.Deref(cur.Spec.Suspend, true))
	}
}
