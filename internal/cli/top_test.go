package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	itesting "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
)

// getItems reads the items of `get KIND -o json` over the examples at 65m.
func getItems[T any](t *testing.T, kind string) []T {
	t.Helper()
	var doc struct {
		Items []T `json:"items"`
	}
	out := mustRun(t, newGetCommand(), kind, "-f", "../../examples/", "--at", "65m", "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Items
}

// top's queue rows add up get's workloads: the pods placed and the biggest admitted
// workloads of each queue, busiest queue first.
func TestTopQueues(t *testing.T) {
	queues, workloads := getItems[view.Queue](t, "queues"), getItems[view.Workload](t, "workloads")
	var rows []topQueue
	if err := json.Unmarshal([]byte(mustRun(t, newTopCommand(), "-f", "../../examples/", "--at", "65m", "-o", "json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(queues) {
		t.Fatalf("%d rows for %d queues", len(rows), len(queues))
	}
	for i, r := range rows {
		if i > 0 && rows[i-1].UsedGPU < r.UsedGPU {
			t.Errorf("row %s after %s uses more", r.Name, rows[i-1].Name)
		}
		pods, biggest := 0, resources.MilliGPU(0)
		for _, w := range workloads {
			if w.ClusterQueue == r.Name && (w.Phase == view.Running || w.Phase == view.Admitted) {
				pods += len(w.Placements)
				biggest = max(biggest, w.GPU)
			}
		}
		if r.Pods != pods || (len(r.Top) > 0 && r.Top[0].GPU != biggest) || len(r.Top) > topShown {
			t.Errorf("queue %s: %+v; want %d pods, biggest workload %d milli-GPU", r.Name, r, pods, biggest)
		}
	}
	table := itesting.TableRows(mustRun(t, newTopCommand(), "queues", "-f", "../../examples/", "--at", "65m"), "CLUSTERQUEUE")
	for _, r := range rows {
		if got, want := table[r.Name]["PODS"], strconv.Itoa(r.Pods); got != want {
			t.Errorf("table PODS of %s: %s, want %s", r.Name, got, want)
		}
	}
}

func TestTopNodes(t *testing.T) {
	nodes := getItems[view.Node](t, "nodes")
	table := itesting.TableRows(mustRun(t, newTopCommand(), "nodes", "-f", "../../examples/", "--at", "65m"), "NODE")
	if len(table) != len(nodes) {
		t.Fatalf("%d rows for %d nodes", len(table), len(nodes))
	}
	for _, n := range nodes {
		var allocated resources.MilliGPU
		for _, g := range n.GPUs {
			allocated += g.Allocated
		}
		if got, want := table[n.Name]["GPUS ALLOCATED"], formatGPU(allocated)+"/"+strconv.Itoa(len(n.GPUs)); got != want {
			t.Errorf("node %s: %s, want %s", n.Name, got, want)
		}
	}
	if _, err := runCommand(t, newTopCommand(), "cohorts", "-f", "../../examples/"); err == nil || !strings.Contains(err.Error(), "queues or nodes") {
		t.Errorf("top cohorts: %v, want a refusal", err)
	}
}

func TestFormatGPU(t *testing.T) {
	cases := map[resources.MilliGPU]string{0: "0", 8000: "8", 142: "0.142", 32856: "32.856", -1500: "-1.500"}
	for m, want := range cases {
		if got := formatGPU(m); got != want {
			t.Errorf("formatGPU(%d) = %q, want %q", m, got, want)
		}
	}
}
