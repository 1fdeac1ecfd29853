package deploycheck

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// fileObjects decodes every document of one file of config/.
func fileObjects(t *testing.T, rel string) objectSet {
	t.Helper()
	p := filepath.Join(configDir, rel)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	set, errs := decodeAll(splitDocuments(p, string(data)))
	for _, err := range errs {
		t.Error(err)
	}
	return set
}

// TestChartRBACMatchesKustomize: the chart (every integration on) grants exactly what
// config/ grants, for the controller and for the node agent.
func TestChartRBACMatchesKustomize(t *testing.T) {
	chart := renderObjects(t, nil)
	for _, tc := range []struct{ file, kustomizeName, chartName string }{
		{"rbac/role.yaml", "gantry-controller", "g-controller"},
		{"nodeagent/daemonset.yaml", "gantry-node-agent", "g-node-agent"},
	} {
		want := mustGet[*rbacv1.ClusterRole](t, fileObjects(t, tc.file), "ClusterRole", tc.kustomizeName)
		got := mustGet[*rbacv1.ClusterRole](t, chart, "ClusterRole", tc.chartName)
		if !reflect.DeepEqual(got.Rules, want.Rules) {
			t.Errorf("chart ClusterRole %s rules\n%v\nconfig/%s rules\n%v", tc.chartName, got.Rules, tc.file, want.Rules)
		}
	}
}

// TestImagesAreWhatMakeImageBuilds: the chart and kustomize pull the repositories
// `make image` names its images after.
func TestImagesAreWhatMakeImageBuilds(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	registry := regexp.MustCompile(`(?m)^REGISTRY\s*\?=\s*(\S+)`).FindSubmatch(makefile)
	refs := regexp.MustCompile(`-ref \$\(REGISTRY\)/([a-z0-9-]+):\$\(VERSION\)`).FindAllSubmatch(makefile, -1)
	if registry == nil || len(refs) != 2 {
		t.Fatalf("Makefile: want REGISTRY and two -ref $(REGISTRY)/<name>:$(VERSION), found %q and %d", registry, len(refs))
	}
	controller := string(registry[1]) + "/" + string(refs[0][1])
	agent := string(registry[1]) + "/" + string(refs[1][1])
	version := ":" + chartAppVersion(t)
	chart := renderObjects(t, nil)
	kust := fileObjects(t, "manager/deployment.yaml")
	for where, got := range map[string]string{
		"chart controller": mustGet[*appsv1.Deployment](t, chart, "Deployment", "g-controller").Spec.Template.Spec.Containers[0].Image,
		"chart node agent": mustGet[*appsv1.DaemonSet](t, chart, "DaemonSet", "g-node-agent").Spec.Template.Spec.Containers[0].Image,
		"config/manager":   mustGet[*appsv1.Deployment](t, kust, "Deployment", "gantry-controller").Spec.Template.Spec.Containers[0].Image,
		"config/nodeagent": mustGet[*appsv1.DaemonSet](t, fileObjects(t, "nodeagent/daemonset.yaml"), "DaemonSet", "gantry-node-agent").Spec.Template.Spec.Containers[0].Image,
	} {
		want := controller + version
		if where == "chart node agent" || where == "config/nodeagent" {
			want = agent + version
		}
		if got != want {
			t.Errorf("%s pulls %s, want %s (built by make image VERSION=%s)", where, got, want, version[1:])
		}
	}
}
