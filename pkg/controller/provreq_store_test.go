package controller

import (
	"strings"
	"testing"
)

// TestKueueCheckObjectsInQueueStore: Kueue's AdmissionChecks and
// ProvisioningRequestConfigs from the cluster are loaded with the queue objects, so a
// ClusterQueue requiring a check works; a queue whose check is missing or refused is
// left out with the problem named, and the others stay.
func TestKueueCheckObjectsInQueueStore(t *testing.T) {
	check := func(controller string) string {
		return `apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov, generation: 1}
spec:
  controllerName: ` + controller + `
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: cfg}
`
	}
	config := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: cfg, generation: 1}
spec: {provisioningClassName: check-capacity.autoscaling.x-k8s.io}
`
	cq := kueueCQDoc("v1beta2", "gpu", "admissionChecksStrategy: {admissionChecks: [{name: prov}]}", 1)
	plain := kueueCQDoc("v1beta2", "plain", "", 1)
	tests := []struct {
		name    string
		docs    []string
		checked bool   // ClusterQueue gpu is loaded with its check
		problem string // a problem line contains it ("" none)
	}{
		{"check and config", []string{check("kueue.x-k8s.io/provisioning-request"), config}, true, ""},
		{"check missing", []string{config}, false, `AdmissionCheck "prov" not found`},
		{"check of another controller", []string{check("example.com/other"), config}, false, "controller \"example.com/other\" is not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q queueStore
			for _, d := range append([]string{kueueRF("v1beta2"), cq, plain}, tc.docs...) {
				if _, ok := q.update(kueueObj(t, d), false); !ok {
					t.Fatalf("not a queue object: %s", d)
				}
			}
			objs, problems := q.current()
			gpu := findCQ(objs, "gpu")
			if (gpu != nil) != tc.checked || tc.checked && len(objs.AdmissionChecks.ByClusterQueue["gpu"]) != 1 {
				t.Errorf("ClusterQueue gpu loaded %v with checks %v; want %v (problems %v)", gpu != nil, objs.AdmissionChecks.ByClusterQueue, tc.checked, problems)
			}
			if findCQ(objs, "plain") == nil {
				t.Errorf("ClusterQueue plain left out: %v", problems)
			}
			joined := strings.Join(problems, "\n")
			if (tc.problem == "") != (joined == "") || !strings.Contains(joined, tc.problem) {
				t.Errorf("problems %q, want one with %q", joined, tc.problem)
			}
		})
	}
}
