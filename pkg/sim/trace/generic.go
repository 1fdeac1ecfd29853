package trace

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// genericRequired are the columns every generic workload CSV has.
func genericRequired() []string { return []string{"name", "submit_at"} }

// genericOptional are the other columns of the generic workload CSV
// (docs/simulator-kpis.md, "Trace formats"); each may be absent or empty.
func genericOptional() []string {
	return []string{
		"namespace",        // default "default"
		"queue",            // LocalQueue; default "default"
		"duration",         // run time, e.g. "2h" or seconds; empty = until the end
		"checkpoint_every", // e.g. "30m"; empty = never
		"priority",         // integer priority value
		"priority_class",   // priority class name
		"pods",             // pods in the gang; default 1
		"min_pods",         // pods that must start together; default pods
		"cpu", "memory",    // per pod, Kubernetes quantities ("4", "500m", "16Gi")
		"gpu",           // nvidia.com/gpu per pod
		"gpu_milli",     // gantry.dev/gpu-milli per pod (share of one GPU)
		"gpu_memory",    // gantry.dev/gpu-memory per pod, MiB
		"mig_profile",   // a MIG profile per pod, e.g. "1g.10gb" (one instance)
		"node_selector", // "key=value;key=value"
	}
}

// ReadGenericWorkloads parses a CSV with named columns into workloads. The header must
// name columns from the documented set (unknown columns are errors, so a typo does not
// silently drop a request).
func ReadGenericWorkloads(r io.Reader, file string) ([]api.Workload, error) {
	t, err := openCSV(r, file, genericRequired(), genericOptional(), true)
	if err != nil {
		return nil, err
	}
	var out []api.Workload
	seen := map[string]int{}
	for t.next() {
		w := genericWorkload(t, file)
		key := w.Namespace + "/" + w.Name
		switch {
		case w.Name == "":
			t.fail("name", "empty workload name")
		case seen[key] != 0:
			t.fail("name", fmt.Sprintf("workload %q already defined on line %d", key, seen[key]))
		}
		seen[key] = w.Source.Line
		out = append(out, w)
	}
	return out, t.err()
}

// genericWorkload reads one row; errors are recorded on t.
func genericWorkload(t *csvTable, file string) api.Workload {
	w := api.Workload{
		Meta: api.Meta{
			Name:      t.str("name"),
			Namespace: orDefault(t.str("namespace"), "default"),
			Source:    api.Source{File: file, Line: t.line()},
		},
		Queue:         orDefault(t.str("queue"), "default"),
		PriorityClass: t.str("priority_class"),
	}
	w.Owner = api.OwnerRef{APIVersion: "batch/v1", Kind: "Job", Name: w.Name}
	w.Timing.SubmitAt = t.duration("submit_at")
	w.Created = sim.Epoch().Add(w.Timing.SubmitAt) // FIFO order among equal priorities
	if t.str("duration") != "" {
		w.Timing.Duration = t.duration("duration")
	}
	if t.str("checkpoint_every") != "" {
		w.Timing.CheckpointEvery = t.duration("checkpoint_every")
	}
	if t.str("priority") != "" {
		w.Priority = int32(t.integer("priority", -1<<31, 1<<31-1))
	}
	ps := api.PodSet{Name: "main", Count: 1, Requests: resources.Vector{}}
	if t.str("pods") != "" {
		ps.Count = int32(t.integer("pods", 1, 1<<20))
	}
	if t.str("min_pods") != "" {
		ps.MinCount = int32(t.integer("min_pods", 1, int64(ps.Count)))
	}
	for _, c := range []struct {
		col  string
		name resources.Name
	}{
		{"cpu", resources.CPU}, {"memory", resources.Memory}, {"gpu", resources.NvidiaGPU},
		{"gpu_milli", resources.GPUMilli}, {"gpu_memory", resources.GPUMemory},
	} {
		col, name := c.col, c.name
		if s := t.str(col); s != "" {
			a, err := resources.Parse(name, s)
			if err != nil {
				t.fail(col, err.Error())
			}
			ps.Requests[name] = a
		}
	}
	if p := t.str("mig_profile"); p != "" {
		ps.Requests[resources.MIGResource(p)] = 1
	}
	ps.NodeSelector = t.selector("node_selector")
	w.PodSets = []api.PodSet{ps}
	return w
}

// duration parses a column with api.ParseDuration ("90s", "2h", "1d", plain seconds).
func (t *csvTable) duration(col string) time.Duration {
	d, err := api.ParseDuration(t.str(col))
	if err != nil {
		t.fail(col, err.Error())
	}
	return d
}

// selector parses "key=value;key=value"; nil when empty.
func (t *csvTable) selector(col string) map[string]string {
	s := t.str(col)
	if s == "" {
		return nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			t.fail(col, fmt.Sprintf("%q is not key=value", kv))
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
