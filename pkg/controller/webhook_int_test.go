package controller

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestWebhooks runs the controller's admission webhooks behind the real API server:
// a Job created with a queue label and no spec.suspend comes out suspended (and then
// runs once Gantry admits it), one without the label is left alone; a ClusterQueue
// breaking a cross-field rule is refused naming the field, and one naming a flavor not
// created yet is accepted.
func TestWebhooks(t *testing.T) {
	f := newFixture(t)
	host, port := freeHostPort(t)
	caPEM, certDir := webhookCerts(t, host)
	f.manager = func(o *ManagerOptions) { o.WebhookHost, o.WebhookPort, o.WebhookCertDir = host, port, certDir }
	f.create(k8s.MakeNode("wh-1").H100(8).Obj(), k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("wh-cq").Quota("h100", "nvidia.com/gpu", "8").Obj(), k8s.MakeLocalQueue("", "lq", "wh-cq").Obj())
	f.startController()
	f.webhookConfigs(caPEM, "https://"+net.JoinHostPort(host, strconv.Itoa(port)))

	// The API server calls the webhook once it serves: retry the first create until then.
	queued := k8s.MakeJob(f.ns, "queued").Queue("lq").Pods(1).GPUs("8").Obj()
	queued.Spec.Suspend = nil
	f.eventually(20*time.Second, "a queued Job suspended by the webhook", func() (bool, string) {
		j := queued.DeepCopy()
		if err := f.c.Create(f.ctx, j); err != nil {
			return false, err.Error()
		}
		if !ptr.Deref(j.Spec.Suspend, false) {
			f.t.Fatalf("queued Job created with suspend %v, want true", j.Spec.Suspend)
		}
		return true, ""
	})
	f.waitBound("queued", 1) // admitted and resumed by Gantry

	plain := k8s.MakeJob(f.ns, "plain").Pods(1).Obj()
	plain.Spec.Suspend = nil
	if err := f.c.Create(f.ctx, plain); err != nil || plain.Spec.Suspend != nil && *plain.Spec.Suspend {
		t.Errorf("a Job without a queue label: %v, suspend %v; want it left alone", err, plain.Spec.Suspend)
	}

	bad := k8s.MakeClusterQueue("wh-bad").Quota("h100", "nvidia.com/gpu", "8").Obj()
	bad.Labels = map[string]string{"gantry-webhook-test": f.ns}
	bad.Spec.ResourceGroups[0].CoveredResources = append(bad.Spec.ResourceGroups[0].CoveredResources, "cpu")
	err := f.c.Create(f.ctx, bad)
	if err == nil || !strings.Contains(err.Error(), "spec.resourceGroups[0].flavors[0].resources") || !strings.Contains(err.Error(), "covered resource cpu") {
		t.Errorf("ClusterQueue covering cpu without quota for it: %v; want a refusal naming the field", err)
	}
	later := k8s.MakeClusterQueue("wh-later").Quota("not-yet", "nvidia.com/gpu", "8").Obj()
	later.Labels = map[string]string{"gantry-webhook-test": f.ns}
	if err := f.c.Create(f.ctx, later); err != nil {
		t.Errorf("a ClusterQueue naming a flavor created later: %v; want it accepted", err)
	}
}

// webhookConfigs points the API server at the test's webhook server, for this test's
// namespace (Jobs) and objects labelled with it (ClusterQueues), so no other test
// passes through them.
func (f *fixture) webhookConfigs(caPEM []byte, base string) {
	f.t.Helper()
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	rule := func(group, version, resource string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops,
			Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}}
	}
	name := "gantry-test-" + f.ns
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "jobs.gantry.dev", SideEffects: &none, FailurePolicy: &fail,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + WebhookPathJob), CABundle: caPEM},
			Rules:                   rule("batch", "v1", "jobs", admissionregistrationv1.Create),
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: f.ns}}}}}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "clusterqueues.gantry.dev", SideEffects: &none, FailurePolicy: &fail,
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(base + WebhookPathClusterQueue), CABundle: caPEM},
			Rules:                   rule(v1alpha1.Group, v1alpha1.Version, "clusterqueues", admissionregistrationv1.Create, admissionregistrationv1.Update),
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"gantry-webhook-test": f.ns}}}}}
	f.create(mutating, validating)
	f.t.Cleanup(func() {
		_ = f.c.Delete(f.ctx, mutating)
		_ = f.c.Delete(f.ctx, validating)
		_ = f.c.DeleteAllOf(f.ctx, &v1alpha1.ClusterQueue{}, client.MatchingLabels{"gantry-webhook-test": f.ns})
		_ = f.c.DeleteAllOf(f.ctx, &batchv1.Job{}, client.InNamespace(f.ns))
	})
}

// webhookCerts makes a CA and a serving certificate for host in a temporary folder, as
// cert-manager would mount them.
func webhookCerts(t *testing.T, host string) (caPEM []byte, dir string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey, key := newKey(), newKey()
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gantry-test-ca"}, IsCA: true,
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host},
		IPAddresses: []net.IP{net.ParseIP(host)}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.crt", "CERTIFICATE", leafDER)
	write("tls.key", "EC PRIVATE KEY", keyDER)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), dir
}

// freeHostPort is a loopback host and a port nothing listens on now.
func freeHostPort(t *testing.T) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return h, n
}
