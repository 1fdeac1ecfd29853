package nodeagent_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// gathered maps "name{k=v,...}" (labels sorted by name, as Gather gives them; node left out) to the
// sample's value.
func gathered(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			var ls []string
			for _, lp := range s.GetLabel() {
				if lp.GetName() != "node" {
					ls = append(ls, lp.GetName()+"="+lp.GetValue())
				}
			}
			key := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch {
			case s.Gauge != nil:
				out[key] = s.GetGauge().GetValue()
			case s.Counter != nil:
				out[key] = s.GetCounter().GetValue()
			}
		}
	}
	return out
}

func newAgentMetrics(t *testing.T, d *nodeagent.Discovery, inv *nodeagent.Inventory) (*nodeagent.AgentMetrics, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := nodeagent.NewAgentMetrics(reg, nodeagent.AgentInfo{Node: "gpu-1", Version: "v1", Driver: "550.1"}, d, inv)
	if err != nil {
		t.Fatal(err)
	}
	return m, reg
}

// TestAgentHealthSeries: GPUs and devices by health, read from the inventory at scrape
// time; a GPU with one unhealthy MIG device counts as unhealthy.
func TestAgentHealthSeries(t *testing.T) {
	b := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced")
	d, inv := b.Inventory()
	_, reg := newAgentMetrics(t, d, inv)
	model := string(d.GPUs[0].Model)
	before := gathered(t, reg)
	if got := before["gantry_node_agent_gpus{health=healthy,model="+model+"}"]; got != float64(len(d.GPUs)) {
		t.Fatalf("healthy GPUs %v before any event, want %d (series %v)", got, len(d.GPUs), before)
	}
	inv.SetHealth(1, false)
	inv.SetDeviceHealth("GPU-2/mig-3g.20gb@4", false)
	after := gathered(t, reg)
	for key, want := range map[string]float64{
		"gantry_node_agent_gpus{health=healthy,model=" + model + "}":                  float64(len(d.GPUs) - 2),
		"gantry_node_agent_gpus{health=unhealthy,model=" + model + "}":                2,
		"gantry_node_agent_devices{health=unhealthy,resource=nvidia.com/mig-3g.20gb}": 2,
		"gantry_node_agent_devices{health=unhealthy,resource=nvidia.com/mig-1g.5gb}":  2, // GPU 1's two
		"gantry_node_agent_info{driver=550.1,version=v1}":                             1,
	} {
		if got, ok := after[key]; !ok || got != want {
			t.Errorf("%s = %v (present %t), want %v", key, got, ok, want)
		}
	}
}

func TestHealthEventKind(t *testing.T) {
	for reason, want := range map[string]string{
		"XID 79 on GPU 1":                  nodeagent.HealthEventXID,
		"XID 94 on GPU 2 (GPU instance 3)": nodeagent.HealthEventXID,
		"double-bit ECC error on GPU 3":    nodeagent.HealthEventECC,
		"GPU 5 cannot be watched for health events: reading its event types: ERROR_NOT_SUPPORTED": nodeagent.HealthEventWatch,
		"waiting for NVML events failed: ERROR_UNKNOWN":                                           nodeagent.HealthEventWatch,
	} {
		if got := nodeagent.HealthEventKind(reason); got != want {
			t.Errorf("HealthEventKind(%q) = %s, want %s", reason, got, want)
		}
	}
}

// TestHealthSinkCounts runs a real health watcher: each event is counted by kind, as
// the watcher words it, and still reaches the agent's own sink.
func TestHealthSinkCounts(t *testing.T) {
	b := mocknode.MakeNode(t)
	b.Server().UnsupportedEvents(5)
	d, inv := b.Inventory()
	m, reg := newAgentMetrics(t, d, inv)
	seen := make(chan nodeagent.HealthEvent, 8)
	w, err := nodeagent.NewHealthWatcher(b.Server(), d, inv, nodeagent.HealthChecks{}, m.HealthSink(func(ev nodeagent.HealthEvent) { seen <- ev }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, 10) }()
	b.Server().InjectXID(1, 79, nvmlmock.NoInstance)
	b.Server().InjectDoubleBitECC(3, nvmlmock.NoInstance)
	for i := 0; i < 3; i++ { // GPU 5 at registration, then the two injected events
		select {
		case <-seen:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 3 health events reached the sink", i)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := gathered(t, reg)
	for _, kind := range []string{nodeagent.HealthEventXID, nodeagent.HealthEventECC, nodeagent.HealthEventWatch} {
		if n := got["gantry_node_agent_health_events_total{kind="+kind+"}"]; n != 1 {
			t.Errorf("%s events = %v, want 1", kind, n)
		}
	}
}

// TestMIGStateAndRegistrations: the MIG state series follows the last reconcile (none
// without a config); registrations count by result, both present from the start.
func TestMIGStateAndRegistrations(t *testing.T) {
	m, reg := newAgentMetrics(t, nil, nil)
	if got := gathered(t, reg)["gantry_node_agent_plugin_registrations_total{result=failure}"]; got != 0 {
		t.Errorf("failed registrations before any = %v", got)
	}
	m.PluginsRegistered()
	m.PluginsRegistered()
	m.PluginRegistrationFailed()
	m.MIGState(migprotocol.Status{Config: "all-1g.10gb", State: migprotocol.Pending})
	m.MIGState(migprotocol.Status{Config: "all-1g.10gb", State: migprotocol.Success})
	got := gathered(t, reg)
	for key, want := range map[string]float64{
		"gantry_node_agent_plugin_registrations_total{result=success}":         2,
		"gantry_node_agent_plugin_registrations_total{result=failure}":         1,
		"gantry_node_agent_mig_config_state{config=all-1g.10gb,state=success}": 1,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	if _, ok := got["gantry_node_agent_mig_config_state{config=all-1g.10gb,state=pending}"]; ok {
		t.Error("the earlier MIG state is still reported")
	}
	m.MIGState(migprotocol.Status{})
	for key := range gathered(t, reg) {
		if strings.HasPrefix(key, "gantry_node_agent_mig_config_state") {
			t.Errorf("%s reported while the node asks for no MIG config", key)
		}
	}
}

// TestMetricsServer serves the registry over HTTP and stops with its context.
func TestMetricsServer(t *testing.T) {
	_, reg := newAgentMetrics(t, nil, nil)
	s, err := nodeagent.ListenMetrics("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want := `gantry_node_agent_info{driver="550.1",node="gpu-1",version="v1"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("/metrics has no %s:\n%s", want, body)
	}
	if _, err := nodeagent.ListenMetrics(s.Addr(), reg); err == nil || !strings.Contains(err.Error(), "--metrics-bind-address") {
		t.Errorf("binding %s twice: %v, want an error naming the flag", s.Addr(), err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}
