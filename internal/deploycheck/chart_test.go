package deploycheck

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func renderObjects(t *testing.T, values map[string]any) objectSet {
	t.Helper()
	set, errs := decodeAll(renderChart(t, release{name: "g", namespace: "gantry-system", values: values}))
	for _, err := range errs {
		t.Error(err)
	}
	return set
}

func mustGet[T any](t *testing.T, set objectSet, kind, name string) T {
	t.Helper()
	o, ok := set.get(kind, name)
	if !ok {
		t.Fatalf("no %s %s rendered", kind, name)
	}
	return o.obj.(T)
}

func TestChartRendersStrictObjects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		kinds  map[string]int
	}{
		// ClusterRoles: the controller's, the node agent's, and the metrics reader to bind to Prometheus.
		{"defaults", nil, map[string]int{"Deployment": 1, "DaemonSet": 1, "ServiceAccount": 2, "ClusterRole": 3, "ClusterRoleBinding": 2, "Service": 1}},
		{"node agent off", map[string]any{"nodeAgent": map[string]any{"enabled": false}},
			map[string]int{"Deployment": 1, "DaemonSet": 0, "ServiceAccount": 1, "ClusterRole": 2, "ClusterRoleBinding": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := renderObjects(t, tc.values)
			for kind, n := range tc.kinds {
				if got := len(set.ofKind(kind)); got != n {
					t.Errorf("%d %s objects, want %d", got, kind, n)
				}
			}
		})
	}
}

func TestNodeAgentDaemonSet(t *testing.T) {
	set := renderObjects(t, nil)
	ds := mustGet[*appsv1.DaemonSet](t, set, "DaemonSet", "g-node-agent")
	pod := ds.Spec.Template.Spec
	sel, err := metav1LabelSelector(ds)
	if err != nil || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("selector %v does not match the pod labels %v (%v)", ds.Spec.Selector, ds.Spec.Template.Labels, err)
	}
	svc := mustGet[*corev1.Service](t, set, "Service", "g-controller-metrics")
	if labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("the controller's metrics Service %v selects node-agent pods %v", svc.Spec.Selector, ds.Spec.Template.Labels)
	}
	c := pod.Containers[0]
	if c.Image != "ghcr.io/gantry-sched/gantry-node-agent:"+chartAppVersion(t) || c.Args[0] != "node-agent" {
		t.Errorf("image %s args %v", c.Image, c.Args)
	}
	checkGPUNodeAffinity(t, pod)
	if len(pod.Tolerations) == 0 || pod.Tolerations[0].Key != "nvidia.com/gpu" || pod.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("tolerations %v, want nvidia.com/gpu Exists", pod.Tolerations)
	}
	checkHostMounts(t, pod, c, map[string]bool{
		"/var/lib/kubelet/device-plugins": false, "/var/lib/kubelet/pod-resources": true, "/run/nvidia/mps": false,
	})
	if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged {
		t.Errorf("default security context %+v, want privileged (MIG re-layout)", sc)
	}
	checkBinding(t, set, pod.ServiceAccountName, "g-node-agent", "gantry-system")
}

// TestNodeAgentPassiveMIGIsUnprivileged: leaving MIG to NVIDIA's MIG manager drops the
// privilege that only MIG re-layout needs.
func TestNodeAgentPassiveMIGIsUnprivileged(t *testing.T) {
	set := renderObjects(t, map[string]any{"nodeAgent": map[string]any{"migPassive": true, "runtimeClassName": "nvidia"}})
	ds := mustGet[*appsv1.DaemonSet](t, set, "DaemonSet", "g-node-agent")
	c := ds.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--mig-passive") {
		t.Errorf("args %v lack --mig-passive", c.Args)
	}
	sc := c.SecurityContext
	if sc == nil || sc.Privileged != nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("security context %+v, want no privilege, no escalation, no capabilities", sc)
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "NVIDIA_MIG_") {
			t.Errorf("unprivileged agent asks for MIG capability devices: %s", e.Name)
		}
	}
	if rc := ds.Spec.Template.Spec.RuntimeClassName; rc == nil || *rc != "nvidia" {
		t.Errorf("runtimeClassName %v, want nvidia", rc)
	}
}

// TestNodeAgentDRA: nodeAgent.dra runs the DRA kubelet plugin beside the device plugin,
// with the kubelet's plugin directories and the CDI directory mounted; draOnly also
// turns the device plugin off. Off by default.
func TestNodeAgentDRA(t *testing.T) {
	draMounts := map[string]bool{"/var/lib/kubelet/plugins_registry": false,
		"/var/lib/kubelet/plugins/gpu.nvidia.com": false, "/var/run/cdi": false}
	base := map[string]bool{"/var/lib/kubelet/device-plugins": false, "/var/lib/kubelet/pod-resources": true, "/run/nvidia/mps": false}
	for _, tc := range []struct {
		name         string
		values       map[string]any
		dra, noDevPl bool
	}{
		{name: "default", values: map[string]any{}},
		{name: "dra", values: map[string]any{"dra": true}, dra: true},
		{name: "draOnly", values: map[string]any{"draOnly": true}, dra: true, noDevPl: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := renderObjects(t, map[string]any{"nodeAgent": tc.values})
			ds := mustGet[*appsv1.DaemonSet](t, set, "DaemonSet", "g-node-agent")
			pod := ds.Spec.Template.Spec
			c := pod.Containers[0]
			want := maps.Clone(base)
			if tc.dra {
				maps.Copy(want, draMounts)
			}
			checkHostMounts(t, pod, c, want)
			if got := slices.Contains(c.Args, "--dra"); got != tc.dra {
				t.Errorf("args %v: --dra present %v, want %v", c.Args, got, tc.dra)
			}
			if got := slices.Contains(c.Args, "--device-plugin=false"); got != tc.noDevPl {
				t.Errorf("args %v: --device-plugin=false present %v, want %v", c.Args, got, tc.noDevPl)
			}
		})
	}
}

// checkGPUNodeAffinity: the pod lands on a node with either GPU label set to "true".
func TestNodeAgentMIGPartedConfig(t *testing.T) {
	config := "version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n    mig-enabled: false\n"
	set := renderObjects(t, map[string]any{"nodeAgent": map[string]any{"migPartedConfig": config}})
	cm := mustGet[*corev1.ConfigMap](t, set, "ConfigMap", "g-mig-parted-config")
	if cm.Data["config.yaml"] != config {
		t.Errorf("ConfigMap config.yaml %q, want %q", cm.Data["config.yaml"], config)
	}
	ds := mustGet[*appsv1.DaemonSet](t, set, "DaemonSet", "g-node-agent")
	pod := ds.Spec.Template.Spec
	if !slices.Contains(pod.Containers[0].Args, "--mig-config-file=/etc/gantry/mig-parted/config.yaml") {
		t.Errorf("args %v lack --mig-config-file", pod.Containers[0].Args)
	}
	mounted := false
	for _, v := range pod.Volumes {
		for _, m := range pod.Containers[0].VolumeMounts {
			mounted = mounted || v.ConfigMap != nil && v.ConfigMap.Name == cm.Name && m.Name == v.Name && m.MountPath == "/etc/gantry/mig-parted"
		}
	}
	if !mounted {
		t.Errorf("ConfigMap %s not mounted at /etc/gantry/mig-parted", cm.Name)
	}
}

func checkGPUNodeAffinity(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	a := pod.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Fatal("no required node affinity")
	}
	var keys []string
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, e := range term.MatchExpressions {
			if e.Operator == corev1.NodeSelectorOpIn && reflect.DeepEqual(e.Values, []string{"true"}) {
				keys = append(keys, e.Key)
			}
		}
	}
	want := []string{"feature.node.kubernetes.io/pci-10de.present", "nvidia.com/gpu.present"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("GPU node terms %v, want one term each for %v", keys, want)
	}
}

// checkHostMounts: each host path is a volume mounted at the same path, read-only as given.
func checkHostMounts(t *testing.T, pod corev1.PodSpec, c corev1.Container, want map[string]bool) {
	t.Helper()
	volumes := map[string]string{}
	for _, v := range pod.Volumes {
		if v.HostPath != nil {
			volumes[v.Name] = v.HostPath.Path
		}
	}
	got := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if volumes[m.Name] == m.MountPath {
			got[m.MountPath] = m.ReadOnly
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host paths mounted (path: read-only) %v, want %v", got, want)
	}
}

// checkBinding: the service account exists and a ClusterRoleBinding gives it the role.
func checkBinding(t *testing.T, set objectSet, sa, role, namespace string) {
	t.Helper()
	if _, ok := set.get("ServiceAccount", sa); !ok {
		t.Errorf("service account %s not rendered", sa)
	}
	mustGet[*rbacv1.ClusterRole](t, set, "ClusterRole", role)
	for _, o := range set.ofKind("ClusterRoleBinding") {
		b := o.obj.(*rbacv1.ClusterRoleBinding)
		for _, s := range b.Subjects {
			if b.RoleRef.Name == role && s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == namespace {
				return
			}
		}
	}
	t.Errorf("no ClusterRoleBinding of %s to %s/%s", role, namespace, sa)
}

func chartAppVersion(t *testing.T) string {
	return readYAMLMap(t, chartDir+"/Chart.yaml")["appVersion"].(string)
}
