package deploycheck

import (
	"slices"
	"testing"

	"github.com/gantry-sched/gantry/pkg/controller"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cert-manager's objects, strict: only the fields the chart writes.
type certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SecretName string    `json:"secretName"`
		DNSNames   []string  `json:"dnsNames"`
		IssuerRef  issuerRef `json:"issuerRef"`
	} `json:"spec"`
}

type issuerRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type issuer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		SelfSigned *struct{} `json:"selfSigned,omitempty"`
	} `json:"spec"`
}

// TestChartWebhooks: with webhooks on, the chart serves the paths the controller
// registers, on the port it listens on, with cert-manager's certificate for the
// Service's name mounted where the controller reads it and its CA injected.
func TestChartWebhooks(t *testing.T) {
	set := renderObjects(t, map[string]any{"webhooks": map[string]any{"enabled": true}})
	dep := mustGet[*appsv1.Deployment](t, set, "Deployment", "g-controller")
	c := dep.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--webhook-port=9443") || !slices.Contains(c.Args, "--webhook-cert-dir=/etc/gantry/webhook-certs") ||
		!slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "webhook" && p.ContainerPort == 9443 }) {
		t.Errorf("controller args %v ports %v: want the webhook port and cert dir", c.Args, c.Ports)
	}
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/etc/gantry/webhook-certs" }) ||
		len(dep.Spec.Template.Spec.Volumes) == 0 || dep.Spec.Template.Spec.Volumes[0].Secret.SecretName != "g-webhook-cert" {
		t.Errorf("volumes %v mounts %v: want the Secret g-webhook-cert at the cert dir", dep.Spec.Template.Spec.Volumes, c.VolumeMounts)
	}
	cert := mustGet[*certificate](t, set, "Certificate", "g-webhook-cert")
	if cert.Spec.SecretName != "g-webhook-cert" || !slices.Contains(cert.Spec.DNSNames, "g-webhook.gantry-system.svc") {
		t.Errorf("certificate %+v: want Secret g-webhook-cert for g-webhook.gantry-system.svc", cert.Spec)
	}
	mutating := mustGet[*admissionregistrationv1.MutatingWebhookConfiguration](t, set, "MutatingWebhookConfiguration", "g-jobs")
	validating := mustGet[*admissionregistrationv1.ValidatingWebhookConfiguration](t, set, "ValidatingWebhookConfiguration", "g-queues")
	for _, ann := range []map[string]string{mutating.Annotations, validating.Annotations} {
		if ann["cert-manager.io/inject-ca-from"] != "gantry-system/g-webhook-cert" {
			t.Errorf("annotations %v: want cert-manager's CA injection", ann)
		}
	}
	var paths []string
	for _, w := range mutating.Webhooks {
		paths = append(paths, *w.ClientConfig.Service.Path)
		if w.ClientConfig.Service.Name != "g-webhook" || len(w.Rules) != 1 || w.Rules[0].Resources[0] != "jobs" {
			t.Errorf("mutating webhook %s: %+v", w.Name, w)
		}
	}
	for _, w := range validating.Webhooks {
		paths = append(paths, *w.ClientConfig.Service.Path)
	}
	// Three Job entries: one per queue label, and one for unlabelled Jobs (the default
	// LocalQueue), which must not refuse Jobs while Gantry is down.
	if last := mutating.Webhooks[len(mutating.Webhooks)-1]; last.FailurePolicy == nil || *last.FailurePolicy != admissionregistrationv1.Ignore ||
		last.ObjectSelector == nil || len(last.ObjectSelector.MatchExpressions) != 2 {
		t.Errorf("default-queue webhook %s: failure policy %v, selector %+v; want Ignore and both labels absent", last.Name, last.FailurePolicy, last.ObjectSelector)
	}
	want := []string{controller.WebhookPathJob, controller.WebhookPathJob, controller.WebhookPathJob, controller.WebhookPathClusterQueue, controller.WebhookPathLocalQueue,
		controller.WebhookPathResourceFlavor, controller.WebhookPathCohort, controller.WebhookPathWorkloadPriorityClass, controller.WebhookPathTopology}
	if !slices.Equal(paths, want) {
		t.Errorf("webhook paths %v, want the controller's %v", paths, want)
	}
	svc := mustGet[*corev1.Service](t, set, "Service", "g-webhook")
	if svc.Spec.Ports[0].TargetPort.StrVal != "webhook" {
		t.Errorf("webhook Service targets %v, want the webhook port", svc.Spec.Ports[0].TargetPort)
	}
	checkPodWebhook(t, set, 2)
	owners := renderObjects(t, map[string]any{"webhooks": map[string]any{"enabled": true, "queuedOwnerPods": true}})
	checkPodWebhook(t, owners, 3)
	if off := renderObjects(t, nil); len(off.ofKind("MutatingWebhookConfiguration")) != 0 {
		t.Error("webhooks rendered while off by default")
	}
}

// checkPodWebhook: the pod webhook configuration has n entries (one per queue label,
// and one for unlabelled pods when queuedOwnerPods is on), each for pods on create at
// the controller's pod path, none refusing pods while Gantry is down.
func checkPodWebhook(t *testing.T, set objectSet, n int) {
	t.Helper()
	pods := mustGet[*admissionregistrationv1.MutatingWebhookConfiguration](t, set, "MutatingWebhookConfiguration", "g-pods")
	if len(pods.Webhooks) != n {
		t.Fatalf("pod webhook entries %d, want %d", len(pods.Webhooks), n)
	}
	for _, w := range pods.Webhooks {
		if p := w.ClientConfig.Service.Path; p == nil || *p != controller.WebhookPathPod {
			t.Errorf("pod webhook %s: path %v, want %s", w.Name, p, controller.WebhookPathPod)
		}
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
			t.Errorf("pod webhook %s: failure policy %v, want Ignore", w.Name, w.FailurePolicy)
		}
		if len(w.Rules) != 1 || w.Rules[0].Resources[0] != "pods" || !slices.Equal(w.Rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
			t.Errorf("pod webhook %s: rules %+v, want pods on CREATE", w.Name, w.Rules)
		}
	}
}
