package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkObj is an object as the API server serves it (status and server metadata kept,
// as an informer hands it over).
func checkObj(kind, name string, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind,
		"metadata": map[string]any{"name": name, "uid": "u-" + name, "resourceVersion": "7", "creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": spec, "status": map[string]any{"conditions": []any{}}}
}

func TestLoadTypedCheckObjects(t *testing.T) {
	config := checkObj("ProvisioningRequestConfig", "cfg", map[string]any{
		"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
		"retryStrategy":         map[string]any{"backoffLimitCount": int64(1), "backoffBaseSeconds": int64(10)}})
	check := func(cfg string) map[string]any {
		return checkObj("AdmissionCheck", "prov", map[string]any{"controllerName": "kueue.x-k8s.io/provisioning-request",
			"parameters": map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": cfg}})
	}
	cq := &v1alpha1.ClusterQueue{ObjectMeta: metav1.ObjectMeta{Name: "cq"}, Spec: v1alpha1.ClusterQueueSpec{
		AdmissionChecks: []string{"prov"},
		ResourceGroups: []v1alpha1.ResourceGroup{{CoveredResources: []corev1.ResourceName{"nvidia.com/gpu"}, Flavors: []v1alpha1.FlavorQuotas{{Name: "f",
			Resources: []v1alpha1.ResourceQuota{{Name: "nvidia.com/gpu", NominalQuota: resource.MustParse("8")}}}}}}}}
	flavor := &v1alpha1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: "f"}}
	tests := []struct {
		name    string
		objs    []map[string]any
		wantErr string // "" means it loads
	}{
		{"check and config", []map[string]any{config, check("cfg")}, ""},
		{"no checks read", nil, `ClusterQueue cq: spec.admissionChecks[0]: AdmissionCheck "prov" not found`},
		{"dangling config", []map[string]any{check("other")}, `AdmissionCheck prov: spec.parameters.name: ProvisioningRequestConfig "other" not found`},
		{"other kind", []map[string]any{config, check("cfg"), checkObj("ClusterQueue", "x", nil)}, "not an admission check object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := LoadTyped("cluster", Typed{Flavors: []*v1alpha1.ResourceFlavor{flavor}, ClusterQueues: []*v1alpha1.ClusterQueue{cq}, CheckObjects: tc.objs})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "cluster:1:") {
					t.Errorf("err %v names a line of a file that does not exist", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, ok := objs.AdmissionChecks.Config("cfg")
			if !ok || cfg.Retry.BackoffLimitCount != 1 || cfg.Retry.BackoffBase.Seconds() != 10 {
				t.Errorf("config %+v, want the retry strategy read", cfg)
			}
			if refs := objs.AdmissionChecks.ByClusterQueue["cq"]; len(refs) != 1 || refs[0].Name != "prov" {
				t.Errorf("ClusterQueue checks %+v", refs)
			}
		})
	}
}
