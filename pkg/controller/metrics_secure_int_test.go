package controller

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestMetricsAreSecure: the controller, running as the shipped role, serves /metrics
// over HTTPS to a caller bound to config/rbac/metrics_reader_role.yaml, refuses one
// without it (403) and one without a token (401): the API server authenticates and
// authorizes every scrape.
func TestMetricsAreSecure(t *testing.T) {
	f := newFixture(t)
	addr := freeAddr(t)
	f.manager = func(o *ManagerOptions) { o.MetricsAddr, o.MetricsSecure = addr, true }
	var reader rbacv1.ClusterRole
	f.createFromFile("../../config/rbac/metrics_reader_role.yaml", &reader)
	f.create(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "prometheus"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stranger"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: reader.Name},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: reader.Name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus", Namespace: f.ns}}})
	f.startControllerAs(f.shippedIdentity())

	scrape := func(token string) (int, string) {
		req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, "https://"+addr+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		// The certificate is self-signed (no --metrics-cert-dir): the test checks access,
		// not the chain.
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	allowed, denied := f.saToken("prometheus"), f.saToken("stranger")
	f.eventually(20*time.Second, "metrics served to the reader", func() (bool, string) {
		code, body := scrape(allowed)
		return code == http.StatusOK && strings.Contains(body, "# HELP"), fmt.Sprintf("%d %.200s", code, body)
	})
	if code, body := scrape(denied); code != http.StatusForbidden {
		t.Errorf("a token without GET /metrics: %d %.200s, want 403", code, body)
	}
	if code, body := scrape(""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d %.200s, want 401", code, body)
	}
}

// saToken asks the API server for a short-lived token of a service account of the
// test's namespace.
func (f *fixture) saToken(sa string) string {
	f.t.Helper()
	cs, err := kubernetes.NewForConfig(testEnv.Config)
	if err != nil {
		f.t.Fatal(err)
	}
	tr, err := cs.CoreV1().ServiceAccounts(f.ns).CreateToken(f.ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("token for %s: %v", sa, err)
	}
	return tr.Status.Token
}

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
