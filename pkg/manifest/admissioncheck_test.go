package manifest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// provDocs are Kueue's ProvisioningRequest sample (an AdmissionCheck, its config and a
// ClusterQueue using it) under apiVersion, with the ClusterQueue's check reference.
func provDocs(apiVersion, cqChecks string) string {
	return `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: ` + apiVersion + `
kind: ProvisioningRequestConfig
metadata: {name: prov-test-config}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
  managedResources: [nvidia.com/gpu]
  retryStrategy: {backoffLimitCount: 2, backoffBaseSeconds: 30, backoffMaxSeconds: 600}
  podSetMergePolicy: IdenticalWorkloadSchedulingRequirements
---
apiVersion: ` + apiVersion + `
kind: AdmissionCheck
metadata: {name: sample-prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov-test-config}
---
apiVersion: ` + apiVersion + `
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: default-flavor, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
` + cqChecks
}

func TestLoadAdmissionChecks(t *testing.T) {
	strategy := "  admissionChecksStrategy:\n    admissionChecks:\n    - {name: sample-prov, onFlavors: [default-flavor]}\n"
	tests := []struct {
		name, apiVersion, checks string
		want                     []api.ClusterQueueCheck
	}{
		{"v1beta2 strategy", kueueV1beta2, strategy,
			[]api.ClusterQueueCheck{{Name: "sample-prov", OnFlavors: []string{"default-flavor"}, Field: "spec.admissionChecksStrategy.admissionChecks[0].name"}}},
		{"v1beta1 strategy", kueueV1beta1, strategy,
			[]api.ClusterQueueCheck{{Name: "sample-prov", OnFlavors: []string{"default-flavor"}, Field: "spec.admissionChecksStrategy.admissionChecks[0].name"}}},
		{"v1beta1 list", kueueV1beta1, "  admissionChecks: [sample-prov]\n",
			[]api.ClusterQueueCheck{{Name: "sample-prov", Field: "spec.admissionChecks[0]"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(provDocs(tc.apiVersion, tc.checks)))
			if err != nil {
				t.Fatal(err)
			}
			ac := objs.AdmissionChecks
			if got := ac.ByClusterQueue["cluster-queue"]; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("checks of cluster-queue = %+v, want %+v", got, tc.want)
			}
			ch, ok := ac.Check("sample-prov")
			if !ok || ch.Config != "prov-test-config" || ch.ControllerName != api.ProvisioningRequestControllerName {
				t.Errorf("AdmissionCheck = %+v, %v", ch, ok)
			}
			cfg, ok := ac.Config("prov-test-config")
			wantRetry := api.ProvisioningRetry{BackoffLimitCount: 2, BackoffBase: 30 * time.Second, BackoffMax: 10 * time.Minute}
			if !ok || cfg.ClassName != api.ProvisioningClassAtomicScaleUp || cfg.Retry != wantRetry ||
				!reflect.DeepEqual(cfg.ManagedResources, []resources.Name{resources.NvidiaGPU}) || cfg.PodSetMergePolicy != "IdenticalWorkloadSchedulingRequirements" {
				t.Errorf("config = %+v", cfg)
			}
		})
	}
}

func TestProvisioningRetryDefaults(t *testing.T) {
	doc := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\nmetadata: {name: c}\nspec:\n  provisioningClassName: check-capacity.autoscaling.x-k8s.io\n  retryStrategy: {backoffLimitCount: 0}\n"
	objs, err := LoadBytes("in.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := api.ProvisioningRetry{BackoffLimitCount: 0, BackoffBase: time.Minute, BackoffMax: 30 * time.Minute}
	if got := objs.AdmissionChecks.Configs[0].Retry; got != want {
		t.Errorf("retry = %+v, want %+v (limit 0 kept, the rest Kueue's defaults)", got, want)
	}
}

func TestAdmissionCheckErrors(t *testing.T) {
	base := provDocs(kueueV1beta2, "  admissionChecksStrategy:\n    admissionChecks:\n    - {name: sample-prov}\n")
	tests := []struct {
		name, input       string
		wantKind, wantObj string
		wantField         string
		wantMsg           string
	}{
		{"dangling check", strings.Replace(base, "- {name: sample-prov}", "- {name: other}", 1),
			"ClusterQueue", "cluster-queue", "spec.admissionChecksStrategy.admissionChecks[0].name", `AdmissionCheck "other" not found`},
		{"dangling onFlavors", strings.Replace(base, "- {name: sample-prov}", "- {name: sample-prov, onFlavors: [gpu]}", 1),
			"ClusterQueue", "cluster-queue", "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]", `ResourceFlavor "gpu" not found`},
		{"dangling config", strings.Replace(base, "ProvisioningRequestConfig, name: prov-test-config}", "ProvisioningRequestConfig, name: missing}", 1),
			"AdmissionCheck", "sample-prov", "spec.parameters.name", `ProvisioningRequestConfig "missing" not found`},
		{"another controller", strings.Replace(base, "controllerName: kueue.x-k8s.io/provisioning-request", "controllerName: kueue.x-k8s.io/multikueue", 1),
			"AdmissionCheck", "sample-prov", "spec.controllerName", "only the ProvisioningRequest check"},
		{"no parameters", strings.Replace(base, "  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov-test-config}\n", "", 1),
			"AdmissionCheck", "sample-prov", "spec.parameters", "needs parameters naming a ProvisioningRequestConfig"},
		{"parameters of another kind", strings.Replace(base, "kind: ProvisioningRequestConfig, name", "kind: MultiKueueConfig, name", 1),
			"AdmissionCheck", "sample-prov", "spec.parameters.kind", `"MultiKueueConfig": want ProvisioningRequestConfig`},
		{"unknown class", strings.Replace(base, "best-effort-atomic-scale-up.autoscaling.x-k8s.io", "queued-provisioning.gke.io", 1),
			"ProvisioningRequestConfig", "prov-test-config", "spec.provisioningClassName", "not simulated"},
		{"unknown field", strings.Replace(base, "  podSetMergePolicy:", "  mergePolicy:", 1),
			"ProvisioningRequestConfig", "prov-test-config", "spec.mergePolicy", "unknown field"},
		{"negative backoff", strings.Replace(base, "backoffBaseSeconds: 30", "backoffBaseSeconds: -1", 1),
			"ProvisioningRequestConfig", "prov-test-config", "spec.retryStrategy.backoffBaseSeconds", "must not be negative"},
		{"max below base", strings.Replace(base, "backoffMaxSeconds: 600", "backoffMaxSeconds: 10", 1),
			"ProvisioningRequestConfig", "prov-test-config", "spec.retryStrategy.backoffMaxSeconds", "must not be below backoffBaseSeconds"},
		{"merge policy", strings.Replace(base, "IdenticalWorkloadSchedulingRequirements", "Merge", 1),
			"ProvisioningRequestConfig", "prov-test-config", "spec.podSetMergePolicy", `unknown value "Merge"`},
		{"bad managed resource", strings.Replace(base, "[nvidia.com/gpu]", "[nvidia.com/gpu, nvidia.com/gpu]", 1),
			"ProvisioningRequestConfig", "prov-test-config", "spec.managedResources[1]", "listed twice"},
		{"check listed twice", strings.Replace(base, "- {name: sample-prov}", "- {name: sample-prov}\n    - {name: sample-prov}", 1),
			"ClusterQueue", "cluster-queue", "spec.admissionChecksStrategy.admissionChecks[1].name", "listed twice"},
		{"list and strategy", provDocs(kueueV1beta1, "  admissionChecks: [sample-prov]\n  admissionChecksStrategy:\n    admissionChecks: [{name: sample-prov}]\n"),
			"ClusterQueue", "cluster-queue", "spec.admissionChecksStrategy", "may not be set together with spec.admissionChecks"},
		{"retryDelayMinutes under v1beta2", strings.Replace(base, "  controllerName:", "  retryDelayMinutes: 5\n  controllerName:", 1),
			"AdmissionCheck", "sample-prov", "spec.retryDelayMinutes", "not a field of kueue.x-k8s.io/v1beta2"},
		{"namespaced", strings.Replace(base, "metadata: {name: sample-prov}", "metadata: {name: sample-prov, namespace: x}", 1),
			"AdmissionCheck", "x/sample-prov", "metadata.namespace", "cluster-scoped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got *Error
			list := loadErrors(t, tc.input)
			for _, e := range list {
				if e.Field == tc.wantField {
					got = e
				}
			}
			if got == nil {
				t.Fatalf("no problem at %s; got:\n%v", tc.wantField, list)
			}
			if got.Source.File != "in.yaml" || got.Source.Line == 0 || got.Kind != tc.wantKind || got.Name != tc.wantObj || !strings.Contains(got.Msg, tc.wantMsg) {
				t.Errorf("got %v (%s %s at %s), want %s %s: %q", got, got.Kind, got.Name, got.Source, tc.wantKind, tc.wantObj, tc.wantMsg)
			}
		})
	}
}
