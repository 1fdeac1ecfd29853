package nodeagent

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// The values of the health label of the agent's GPU and device series.
const (
	metricHealthy   = "healthy"
	metricUnhealthy = "unhealthy"
)

// healthCollector reads GPU and device health from the inventory at each scrape, so
// the series cannot drift from what the device plugin advertises.
type healthCollector struct {
	node    string
	d       *Discovery
	inv     *Inventory
	gpus    *prometheus.Desc // gantry_node_agent_gpus{node, model, health}
	devices *prometheus.Desc // gantry_node_agent_devices{node, resource, health}
}

func newHealthCollector(node string, d *Discovery, inv *Inventory) *healthCollector {
	return &healthCollector{node: node, d: d, inv: inv,
		gpus: prometheus.NewDesc("gantry_node_agent_gpus",
			"The node's GPUs by model and health: a GPU is unhealthy when any device advertised from it is.",
			[]string{"node", "model", "health"}, nil),
		devices: prometheus.NewDesc("gantry_node_agent_devices",
			"Devices the kubelet device plugin advertises, by resource name and health.",
			[]string{"node", "resource", "health"}, nil),
	}
}

func (c *healthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.gpus
	ch <- c.devices
}

// Collect reports both health values of every model and resource, 0 included, so an
// alert on the unhealthy series sees a 0 rather than nothing.
func (c *healthCollector) Collect(ch chan<- prometheus.Metric) {
	if c.d == nil || c.inv == nil {
		return
	}
	down := c.inv.unhealthyGPUs()
	gpus := map[string][2]int{} // model -> healthy, unhealthy
	for _, g := range c.d.GPUs {
		n := gpus[string(g.Model)]
		if down[g.Index] {
			n[1]++
		} else {
			n[0]++
		}
		gpus[string(g.Model)] = n
	}
	c.emit(ch, c.gpus, gpus)
	c.emit(ch, c.devices, c.inv.deviceHealth())
}

// emit sends one healthy and one unhealthy gauge per key, in key order.
func (c *healthCollector) emit(ch chan<- prometheus.Metric, desc *prometheus.Desc, counts map[string][2]int) {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		n := counts[k]
		// Gauge samples are float64 by Prometheus's API; the counts are integers.
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n[0]), c.node, k, metricHealthy)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, float64(n[1]), c.node, k, metricUnhealthy)
	}
}

// unhealthyGPUs are the GPUs marked unhealthy as a whole or holding an unhealthy device.
func (inv *Inventory) unhealthyGPUs() map[int]bool {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := map[int]bool{}
	for gpu, down := range inv.gpuDown {
		if down {
			out[gpu] = true
		}
	}
	for _, id := range inv.order {
		if p := inv.byID[id]; !p.Healthy {
			out[p.Device.GPU] = true
		}
	}
	return out
}

// deviceHealth counts the advertised devices by resource name: healthy, unhealthy.
func (inv *Inventory) deviceHealth() map[string][2]int {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	out := map[string][2]int{}
	for _, id := range inv.order {
		p := inv.byID[id]
		n := out[string(p.Resource)]
		if p.Healthy {
			n[0]++
		} else {
			n[1]++
		}
		out[string(p.Resource)] = n
	}
	return out
}
