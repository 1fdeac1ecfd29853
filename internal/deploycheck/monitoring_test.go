package deploycheck

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// monitoringOn turns on every monitoring object of the chart.
func monitoringOn() map[string]any {
	on := map[string]any{"enabled": true}
	return map[string]any{
		"grafana":    map[string]any{"dashboards": on},
		"prometheus": map[string]any{"rules": on, "serviceMonitor": on, "podMonitor": on},
	}
}

// grafanaDashboard is the part of Grafana's dashboard JSON the tests read.
type grafanaDashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []grafanaVariable `json:"list"`
	} `json:"templating"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaPanel struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Datasource  *grafanaSource  `json:"datasource"`
	Targets     []grafanaTarget `json:"targets"`
	Panels      []grafanaPanel  `json:"panels"` // a collapsed row's
	GridPos     map[string]int  `json:"gridPos"`
	Options     map[string]any  `json:"options"`
}

type grafanaTarget struct {
	RefID      string         `json:"refId"`
	Expr       string         `json:"expr"`
	Datasource *grafanaSource `json:"datasource"`
}

type grafanaSource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type grafanaVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource *grafanaSource  `json:"datasource"`
}

// queryText is a variable's query: a string, or an object with a "query" string.
func (v grafanaVariable) queryText() (string, error) {
	var s string
	if err := json.Unmarshal(v.Query, &s); err == nil {
		return s, nil
	}
	var o struct {
		Query string `json:"query"`
	}
	err := json.Unmarshal(v.Query, &o)
	return o.Query, err
}

// namedExpr is one PromQL expression of the chart and where it is.
type namedExpr struct{ where, expr string }

// dashboardOf decodes the dashboard ConfigMap's JSON.
func dashboardOf(t *testing.T, set objectSet) grafanaDashboard {
	t.Helper()
	cm := mustGet[*corev1.ConfigMap](t, set, "ConfigMap", "g-grafana-dashboard")
	var d grafanaDashboard
	if err := json.Unmarshal([]byte(cm.Data["gantry.json"]), &d); err != nil {
		t.Fatalf("ConfigMap %s gantry.json: %v", cm.Name, err)
	}
	return d
}

// allPanels flattens rows (collapsed rows hold their panels).
func allPanels(ps []grafanaPanel) []grafanaPanel {
	var out []grafanaPanel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, allPanels(p.Panels)...)
	}
	return out
}

// labelValues reads Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

// chartExprs are every PromQL expression of the dashboard (panel targets and variable
// queries) and of the alert rules.
func chartExprs(t *testing.T, set objectSet) []namedExpr {
	t.Helper()
	var out []namedExpr
	d := dashboardOf(t, set)
	for _, p := range allPanels(d.Panels) {
		for _, tg := range p.Targets {
			out = append(out, namedExpr{fmt.Sprintf("dashboard panel %q target %s", p.Title, tg.RefID), tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := v.queryText()
		m := labelValues.FindStringSubmatch(q)
		if err != nil || m == nil {
			t.Errorf("dashboard variable %s: query %q is not label_values(selector, label) (%v)", v.Name, q, err)
			continue
		}
		out = append(out, namedExpr{"dashboard variable " + v.Name, m[1]})
	}
	rules := mustGet[*prometheusRule](t, set, "PrometheusRule", "g-alerts")
	for _, g := range rules.Spec.Groups {
		for i, r := range g.Rules {
			out = append(out, namedExpr{fmt.Sprintf("rule group %s rule %d (%s)", g.Name, i, r.Alert), r.Expr})
		}
	}
	return out
}

// TestChartPromQLParses: every expression of the dashboard and the rules reads as PromQL.
func TestChartPromQLParses(t *testing.T) {
	exprs := chartExprs(t, renderObjects(t, monitoringOn()))
	if len(exprs) < 20 {
		t.Fatalf("%d expressions found, want the dashboard's and the rules' (20 or more)", len(exprs))
	}
	for _, e := range exprs {
		if _, err := promqlMetrics(e.expr); err != nil {
			t.Errorf("%s: %v\n%s", e.where, err, e.expr)
		}
	}
}

// TestGrafanaDashboard: the dashboard ConfigMap carries the sidecar's label, and every
// panel reads the ${datasource} variable and says what it shows.
func TestGrafanaDashboard(t *testing.T) {
	set := renderObjects(t, monitoringOn())
	cm := mustGet[*corev1.ConfigMap](t, set, "ConfigMap", "g-grafana-dashboard")
	if cm.Labels["grafana_dashboard"] != "1" || cm.Namespace != "gantry-system" {
		t.Errorf("ConfigMap labels %v namespace %q, want grafana_dashboard: \"1\" in the release namespace", cm.Labels, cm.Namespace)
	}
	d := dashboardOf(t, set)
	if d.Title == "" || d.UID == "" {
		t.Errorf("dashboard title %q uid %q: both are needed", d.Title, d.UID)
	}
	hasSource := false
	for _, v := range d.Templating.List {
		hasSource = hasSource || v.Name == "datasource" && v.Type == "datasource"
	}
	if !hasSource {
		t.Error("no datasource variable")
	}
	ids := map[int]bool{}
	for _, p := range allPanels(d.Panels) {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || p.Description == "" {
			t.Errorf("panel %d (%q) needs a title and a description", p.ID, p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %+v, %d targets; want ${datasource} and a query", p.Title, p.Datasource, len(p.Targets))
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" || tg.Expr == "" {
				t.Errorf("panel %q target %s: datasource %+v expr %q", p.Title, tg.RefID, tg.Datasource, tg.Expr)
			}
		}
	}
}

// TestGrafanaDashboardValues: the label and the switch come from values.yaml.
func TestGrafanaDashboardValues(t *testing.T) {
	set := renderObjects(t, map[string]any{"grafana": map[string]any{"dashboards": map[string]any{
		"labels": map[string]any{"dashboards": "gantry"}, "namespace": "monitoring", "annotations": map[string]any{"grafana_folder": "GPU"}}}})
	cm := mustGet[*corev1.ConfigMap](t, set, "ConfigMap", "g-grafana-dashboard")
	if cm.Labels["dashboards"] != "gantry" || cm.Namespace != "monitoring" || cm.Annotations["grafana_folder"] != "GPU" {
		t.Errorf("labels %v namespace %q annotations %v", cm.Labels, cm.Namespace, cm.Annotations)
	}
	off := renderObjects(t, map[string]any{"grafana": map[string]any{"dashboards": map[string]any{"enabled": false}}})
	if _, ok := off.get("ConfigMap", "g-grafana-dashboard"); ok {
		t.Error("dashboard ConfigMap rendered with grafana.dashboards.enabled false")
	}
}

// TestPrometheusRules: the five alerts, each with a severity, a summary, a description
// and a runbook; thresholds come from values.yaml; nothing without the switch.
func TestPrometheusRules(t *testing.T) {
	if _, ok := renderObjects(t, nil).get("PrometheusRule", "g-alerts"); ok {
		t.Error("PrometheusRule rendered by default (it needs the operator's CRDs)")
	}
	values := monitoringOn()
	values["prometheus"].(map[string]any)["rules"] = map[string]any{"enabled": true,
		"gpusStranded": map[string]any{"strandedPercent": 35}, "alertLabels": map[string]any{"team": "ml-platform"}}
	values["prometheus"].(map[string]any)["labels"] = map[string]any{"release": "kube-prometheus-stack"}
	rules := mustGet[*prometheusRule](t, renderObjects(t, values), "PrometheusRule", "g-alerts")
	if rules.Labels["release"] != "kube-prometheus-stack" || rules.Labels["app.kubernetes.io/instance"] != "g" {
		t.Errorf("PrometheusRule labels %v, want the chart's and prometheus.labels", rules.Labels)
	}
	seen := map[string]bool{}
	for _, g := range rules.Spec.Groups {
		for _, r := range g.Rules {
			seen[r.Alert] = true
			for _, a := range []string{"summary", "description", "runbook_url"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("alert %s has no %s", r.Alert, a)
				}
			}
			if !strings.Contains(r.Annotations["runbook_url"], "#"+strings.ToLower(r.Alert)) {
				t.Errorf("alert %s runbook %q does not point at its section", r.Alert, r.Annotations["runbook_url"])
			}
			if r.Labels["severity"] == "" || r.Labels["team"] != "ml-platform" || r.For == "" {
				t.Errorf("alert %s labels %v for %q", r.Alert, r.Labels, r.For)
			}
			if r.Alert == "GantryGPUsStranded" && !strings.Contains(r.Expr, "> 35") {
				t.Errorf("GantryGPUsStranded ignores strandedPercent: %s", r.Expr)
			}
		}
	}
	for _, a := range []string{"GantryQueueStarving", "GantryGPUsStranded", "GantryPreemptionStorm", "GantryNodeAgentDown", "GantryUnhealthyGPUs"} {
		if !seen[a] {
			t.Errorf("no alert %s", a)
		}
	}
}

// TestScrapeTargets: the ServiceMonitor selects the controller's metrics Service by a
// port it has; the PodMonitor selects the node agents' pods by the port the agent
// serves on.
func TestScrapeTargets(t *testing.T) {
	set := renderObjects(t, monitoringOn())
	svc := mustGet[*corev1.Service](t, set, "Service", "g-controller-metrics")
	sm := mustGet[*serviceMonitor](t, set, "ServiceMonitor", "g-controller")
	if !selects(t, sm.Spec.Selector, svc.Labels) || !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
		return len(sm.Spec.Endpoints) == 1 && p.Name == sm.Spec.Endpoints[0].Port
	}) {
		t.Errorf("ServiceMonitor %+v does not select Service %v by one of its ports %v", sm.Spec, svc.Labels, svc.Spec.Ports)
	}
	// The controller serves /metrics securely by default: the ServiceMonitor scrapes it
	// over HTTPS with Prometheus' token, and the Deployment asks for secure serving.
	if e := sm.Spec.Endpoints[0]; e.Scheme != "https" || e.BearerTokenFile == "" || e.TLSConfig == nil {
		t.Errorf("ServiceMonitor endpoint %+v: want https with a bearer token", e)
	}
	ctl := mustGet[*appsv1.Deployment](t, set, "Deployment", "g-controller").Spec.Template.Spec.Containers[0]
	if !slices.Contains(ctl.Args, "--metrics-secure=true") {
		t.Errorf("controller args %v lack --metrics-secure=true", ctl.Args)
	}
	ds := mustGet[*appsv1.DaemonSet](t, set, "DaemonSet", "g-node-agent")
	c := ds.Spec.Template.Spec.Containers[0]
	pm := mustGet[*podMonitor](t, set, "PodMonitor", "g-node-agent")
	if !selects(t, pm.Spec.Selector, ds.Spec.Template.Labels) || len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("PodMonitor %+v does not select the node agent pods %v", pm.Spec, ds.Spec.Template.Labels)
	}
	port := pm.Spec.PodMetricsEndpoints[0].Port
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == port && p.ContainerPort == 9401 }) ||
		!slices.Contains(c.Args, "--metrics-bind-address=:9401") {
		t.Errorf("node agent ports %v args %v: want port %s 9401 served by --metrics-bind-address", c.Ports, c.Args, port)
	}
	if ds.Spec.Template.Annotations["prometheus.io/port"] != "9401" {
		t.Errorf("node agent pod annotations %v lack prometheus.io/port", ds.Spec.Template.Annotations)
	}
	off := renderObjects(t, map[string]any{"nodeAgent": map[string]any{"metrics": map[string]any{"port": 0}}})
	c = mustGet[*appsv1.DaemonSet](t, off, "DaemonSet", "g-node-agent").Spec.Template.Spec.Containers[0]
	if len(c.Ports) != 0 || !slices.Contains(c.Args, "--metrics-bind-address=0") {
		t.Errorf("metrics port 0: ports %v args %v, want none and --metrics-bind-address=0", c.Ports, c.Args)
	}
}

func selects(t *testing.T, sel metav1.LabelSelector, set map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		t.Fatal(err)
	}
	return !s.Empty() && s.Matches(labels.Set(set))
}
