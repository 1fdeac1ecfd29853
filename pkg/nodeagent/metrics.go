package nodeagent

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// AgentInfo identifies a node agent in gantry_node_agent_info.
type AgentInfo struct {
	Node, Version, Driver string
}

// AgentMetrics are the node agent's Prometheus series, registered on the registry given
// to NewAgentMetrics (served on the agent's --metrics-bind-address), never on a global.
// Every series carries the node's name, so they join the controller's gantry_node_gpus.
// docs/metrics.md lists them.
type AgentMetrics struct {
	node          string
	info          *prometheus.GaugeVec   // {node, version, driver}
	healthEvents  *prometheus.CounterVec // {node, kind}
	registrations *prometheus.CounterVec // {node, result}
	migState      *prometheus.GaugeVec   // {node, config, state}
}

// The values of the kind label of gantry_node_agent_health_events_total.
const (
	HealthEventXID = "xid" // a critical XID the health checks do not ignore
	HealthEventECC = "ecc" // a double-bit ECC error
	// HealthEventWatch: the GPU cannot be watched, or waiting for NVML events failed;
	// the agent then marks the GPUs unhealthy, as NVIDIA's device plugin does.
	HealthEventWatch = "watch"
)

// The values of the result label of gantry_node_agent_plugin_registrations_total.
const (
	registrationSuccess = "success"
	registrationFailure = "failure"
)

// NewAgentMetrics creates the series for the agent described by info and registers
// them on reg, with a collector that reads GPU and device health from inv at each scrape
// (d names the GPUs and their models). inv and d may be nil (nothing discovered yet):
// the health series are then empty.
func NewAgentMetrics(reg prometheus.Registerer, info AgentInfo, d *Discovery, inv *Inventory) (*AgentMetrics, error) {
	m := &AgentMetrics{
		node: info.Node,
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_node_agent_info",
			Help: "1 for the running node agent, labelled with its version and the NVIDIA driver's."}, []string{"node", "version", "driver"}),
		healthEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gantry_node_agent_health_events_total",
			Help: "Health events that marked devices unhealthy, by kind: xid, ecc, or watch (a GPU that cannot be watched, or NVML failing to deliver events)."},
			[]string{"node", "kind"}),
		registrations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gantry_node_agent_plugin_registrations_total",
			Help: "Device-plugin registrations with the kubelet (all resources at once; again after each kubelet restart), by result."},
			[]string{"node", "result"}),
		migState: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gantry_node_agent_mig_config_state",
			Help: "1 for the MIG config the node's nvidia.com/mig.config label asks for and its state (pending, rebooting, success, failed)."},
			[]string{"node", "config", "state"}),
	}
	m.info.WithLabelValues(info.Node, info.Version, info.Driver).Set(1)
	for _, r := range []string{registrationSuccess, registrationFailure} {
		m.registrations.WithLabelValues(info.Node, r)
	}
	for _, k := range []string{HealthEventXID, HealthEventECC, HealthEventWatch} {
		m.healthEvents.WithLabelValues(info.Node, k)
	}
	health := newHealthCollector(info.Node, d, inv)
	for _, c := range []prometheus.Collector{m.info, m.healthEvents, m.registrations, m.migState, health} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// HealthSink counts each event and passes it on to next (nil: nowhere).
func (m *AgentMetrics) HealthSink(next HealthSink) HealthSink {
	return func(ev HealthEvent) {
		m.healthEvents.WithLabelValues(m.node, HealthEventKind(ev.Reason)).Inc()
		if next != nil {
			next(ev)
		}
	}
}

// HealthEventKind classifies an event by its reason, as HealthWatcher words it: "XID n
// on GPU g", "double-bit ECC error on GPU g", else a GPU that could not be watched.
func HealthEventKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, "XID "):
		return HealthEventXID
	case strings.HasPrefix(reason, "double-bit ECC error"):
		return HealthEventECC
	default:
		return HealthEventWatch
	}
}

// PluginsRegistered counts a complete registration of the device plugins.
func (m *AgentMetrics) PluginsRegistered() {
	m.registrations.WithLabelValues(m.node, registrationSuccess).Inc()
}

// PluginRegistrationFailed counts a failed attempt (the registrar tries again).
func (m *AgentMetrics) PluginRegistrationFailed() {
	m.registrations.WithLabelValues(m.node, registrationFailure).Inc()
}

// MIGState records the MIG manager's last reconcile: one series for the config asked
// for and its state; none when the node asks for no config.
func (m *AgentMetrics) MIGState(st migprotocol.Status) {
	m.migState.Reset()
	if st.Config != "" {
		m.migState.WithLabelValues(m.node, st.Config, string(st.State)).Set(1)
	}
}
