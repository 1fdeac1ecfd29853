//go:build cgo

// The node agent's package needs cgo (NVML), so this check does too; `make test` builds
// with cgo, as the node agent's image does.

package deploycheck

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

// describedNames is a prometheus.Registerer that records the metric names of what is
// registered on it, from the collectors' descriptions: a labelled series with no value
// yet (a queue that has never admitted anything) exists for Prometheus only once it has
// one, so gathering would miss it. A histogram also exports name_bucket, name_sum and
// name_count, which queries read instead of the name itself.
type describedNames struct {
	names map[string]bool
	err   error
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *describedNames) Register(c prometheus.Collector) error {
	histogram := false
	switch c.(type) {
	case prometheus.Histogram, *prometheus.HistogramVec:
		histogram = true
	}
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		// A Desc shows its name only in its String form; its format has held since
		// client_golang 0.9, and a change fails here rather than passing silently.
		m := fqName.FindStringSubmatch(d.String())
		if m == nil {
			r.err = fmt.Errorf("no fqName in %s", d)
			continue
		}
		r.names[m[1]] = !histogram
		if histogram {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				r.names[m[1]+s] = true
			}
		}
	}
	return nil
}

func (r *describedNames) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *describedNames) Unregister(prometheus.Collector) bool { return false }

// exportedNames are the series names a query may use: the controller's, the node
// agent's, and Prometheus's own `up`. A histogram's bare name is not one (false).
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	r := &describedNames{names: map[string]bool{"up": true}}
	if _, err := controller.NewMetrics(r); err != nil {
		t.Fatal(err)
	}
	if _, err := nodeagent.NewAgentMetrics(r, nodeagent.AgentInfo{Node: "n"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.names
}

// unknownMetrics lists the names expr selects that are not exported.
func unknownMetrics(expr string, exported map[string]bool) ([]string, error) {
	names, err := promqlMetrics(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if !exported[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// TestChartMetricsAreExported: every series the dashboard and the alert rules read is
// one the controller or the node agent registers (or `up`).
func TestChartMetricsAreExported(t *testing.T) {
	exported := exportedNames(t)
	for _, want := range []string{"gantry_pending_workloads", "gantry_node_agent_gpus", "gantry_admission_wait_time_seconds_bucket"} {
		if !exported[want] {
			t.Fatalf("%s is not among the registered names %v", want, exported)
		}
	}
	used := map[string]bool{}
	for _, e := range chartExprs(t, renderObjects(t, monitoringOn())) {
		unknown, err := unknownMetrics(e.expr, exported)
		if err != nil {
			t.Errorf("%s: %v", e.where, err)
			continue
		}
		if len(unknown) > 0 {
			t.Errorf("%s reads %s, which Gantry does not export:\n%s", e.where, strings.Join(unknown, ", "), e.expr)
		}
		names, _ := promqlMetrics(e.expr)
		for _, n := range names {
			used[n] = true
		}
	}
	if len(used) < 15 {
		t.Errorf("only %d distinct series read: %v", len(used), used)
	}
}

// TestUnknownMetrics: the check catches a misspelt series, a histogram read by its bare
// name, and a histogram suffix on a gauge.
func TestUnknownMetrics(t *testing.T) {
	exported := exportedNames(t)
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`sum(gantry_pending_workloads)`, nil},
		{`sum(gantry_pending_workload)`, []string{"gantry_pending_workload"}},
		{`rate(gantry_admission_wait_time_seconds_bucket[5m])`, nil},
		{`rate(gantry_admission_wait_time_seconds[5m])`, []string{"gantry_admission_wait_time_seconds"}},
		{`gantry_pending_workloads_count`, []string{"gantry_pending_workloads_count"}},
		{`up{job="x"} == 0 unless on (node) gantry_node_agent_infos`, []string{"gantry_node_agent_infos"}},
	} {
		got, err := unknownMetrics(tc.expr, exported)
		if err != nil || strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%q: unknown %v (%v), want %v", tc.expr, got, err, tc.want)
		}
	}
}
