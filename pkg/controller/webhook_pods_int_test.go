package controller

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podWebhookConfig points the API server's pod creates in the test's namespace at the
// pod webhook (failure policy Fail here, so a webhook error fails the create).
func (f *fixture) podWebhookConfig(caPEM []byte, base string) {
	f.t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "gantry-test-pods-" + f.ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.gantry.dev", SideEffects: &none, FailurePolicy: &fail,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + WebhookPathPod), CABundle: caPEM},
			Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: f.ns}}}}}
	f.create(cfg)
	f.t.Cleanup(func() { _ = f.c.Delete(f.ctx, cfg) })
}

// unscheduledTemplate is a one-GPU pod template naming no scheduler.
func unscheduledTemplate(labels map[string]string) corev1.PodTemplateSpec {
	t := servingTemplate("1", labels)
	t.Spec.SchedulerName = ""
	return t
}

// TestPodWebhook runs the pod webhook behind the real API server: pods of a StatefulSet
// and of a Deployment queued on the object (the pods carry no queue label), and a pod
// carrying the queue label its Deployment's template propagates, get schedulerName
// gantry; a pod of an unqueued StatefulSet, one naming another scheduler, and a lone
// labelled pod (Gantry makes no Workload for it) keep theirs.
func TestPodWebhook(t *testing.T) {
	f := newFixture(t)
	host, port := freeHostPort(t)
	caPEM, certDir := webhookCerts(t, host)
	f.manager = func(o *ManagerOptions) { o.WebhookHost, o.WebhookPort, o.WebhookCertDir = host, port, certDir }
	f.startController()
	f.podWebhookConfig(caPEM, "https://"+net.JoinHostPort(host, strconv.Itoa(port)))

	queuedOnObject := map[string]string{api.LabelKueueQueueName: "lq"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "sts", Labels: queuedOnObject},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}}, Template: unscheduledTemplate(nil)}}
	plainSts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "plain-sts"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}}, Template: unscheduledTemplate(nil)}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "dep", Labels: queuedOnObject},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}}, Template: unscheduledTemplate(nil)}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "dep-abc12"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}},
			Template: unscheduledTemplate(map[string]string{"pod-template-hash": "abc12"})}}
	// A Deployment whose template carries the label: its pods carry it too.
	rsLabelled := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "gone-dep-xyz34"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "srv"}},
			Template: unscheduledTemplate(map[string]string{"pod-template-hash": "xyz34"})}}
	f.create(sts, plainSts, dep, rs, rsLabelled)

	// The API server calls the webhook once it serves: retry the first pod until then.
	first := unscheduledTemplate(nil)
	f.eventually(20*time.Second, "the first pod through the webhook", func() (bool, string) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sts-0", Namespace: f.ns, Labels: first.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "sts", UID: sts.UID, Controller: ptr.To(true)}}},
			Spec: first.Spec}
		if err := f.c.Create(f.ctx, p); err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	other := unscheduledTemplate(nil)
	other.Spec.SchedulerName = "volcano"
	f.servingPod("sts-1", other, sts, nil)
	f.servingPod("plain-sts-0", unscheduledTemplate(nil), plainSts, nil)
	f.servingPod("dep-abc12-aaaaa", unscheduledTemplate(nil), rs, map[string]string{"pod-template-hash": "abc12"})
	f.servingPod("gone-dep-xyz34-bbbbb", unscheduledTemplate(nil), rsLabelled, map[string]string{"pod-template-hash": "xyz34", api.LabelKueueQueueName: "lq"})
	lone := k8s.MakePod(f.ns, "lone").Label(api.LabelKueueQueueName, "lq").Obj()
	lone.Spec.SchedulerName = ""
	f.create(lone)

	for _, tc := range []struct{ pod, want string }{
		{"sts-0", SchedulerName},
		{"sts-1", "volcano"},
		{"plain-sts-0", corev1.DefaultSchedulerName},
		{"dep-abc12-aaaaa", SchedulerName},
		{"gone-dep-xyz34-bbbbb", SchedulerName},
		{"lone", corev1.DefaultSchedulerName},
	} {
		var p corev1.Pod
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: tc.pod}, &p); err != nil {
			t.Fatal(err)
		}
		if p.Spec.SchedulerName != tc.want {
			t.Errorf("pod %s: schedulerName %q, want %q", tc.pod, p.Spec.SchedulerName, tc.want)
		}
	}
}
