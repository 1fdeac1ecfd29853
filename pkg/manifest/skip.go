package manifest

import "github.com/gantry-sched/gantry/pkg/api"

// nonScheduling are the kinds that ride along with workloads in real manifests and
// cluster dumps but decide nothing about admission or placement: they are recorded as
// skipped (api.Objects.Skipped), not refused, so `kubectl get all -o yaml` output and a
// chart's rendered manifests load. Keyed by kind; the value is the apiVersions.
func nonScheduling() map[string][]string {
	core, rbac := []string{"v1"}, []string{"rbac.authorization.k8s.io/v1"}
	gatewayAPI := []string{"gateway.networking.k8s.io/v1", "gateway.networking.k8s.io/v1beta1"}
	return map[string][]string{
		"ConfigMap": core, "Secret": core, "Service": core, "ServiceAccount": core, "Endpoints": core,
		"PersistentVolumeClaim": core, "PersistentVolume": core, "LimitRange": core, "ResourceQuota": core, "Event": core,
		"Role": rbac, "RoleBinding": rbac, "ClusterRole": rbac, "ClusterRoleBinding": rbac,
		"EndpointSlice":            {"discovery.k8s.io/v1"},
		"Ingress":                  {"networking.k8s.io/v1"},
		"NetworkPolicy":            {"networking.k8s.io/v1"},
		"StorageClass":             {"storage.k8s.io/v1"},
		"PodDisruptionBudget":      {"policy/v1"},
		"HorizontalPodAutoscaler":  {"autoscaling/v1", "autoscaling/v2"},
		"Lease":                    {"coordination.k8s.io/v1"},
		"CustomResourceDefinition": {"apiextensions.k8s.io/v1"},
		// Gateway API routing in front of serving workloads.
		"Gateway": gatewayAPI, "HTTPRoute": gatewayAPI, "GRPCRoute": gatewayAPI,
	}
}

// skipNonScheduling records a document of a non-scheduling kind as skipped; false
// when the kind is one to read.
func (l *loader) skipNonScheduling(d document, apiVersion, kind, name string) bool {
	for _, v := range nonScheduling()[kind] {
		if v == apiVersion {
			l.objs.Skipped = append(l.objs.Skipped, api.Skipped{Source: srcOf(d.file, d.line), APIVersion: apiVersion,
				Kind: kind, Name: name, Why: "does not affect scheduling"})
			return true
		}
	}
	return false
}
