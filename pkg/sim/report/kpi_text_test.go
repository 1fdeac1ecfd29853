package report

import (
	"bytes"
	"strings"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// tableCells is gt.TableRows, failing the test when the table is missing.
func tableCells(t *testing.T, out, firstHeader string) map[string]map[string]string {
	t.Helper()
	rows := gt.TableRows(out, firstHeader)
	if rows == nil {
		t.Fatalf("no table with header %s in:\n%s", firstHeader, out)
	}
	return rows
}

func writeText(t *testing.T, r Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// One preemption and one spot interruption in the same queue: each notice is followed by
// its eviction, and the table must count one of each, not two preemptions.
func TestWriteTextSeparatesPreemptionsFromSpotInterruptions(t *testing.T) {
	c := NewKPICollector(KPIOptions{})
	for _, e := range []sim.EventRecord{
		MakeEvent(0, sim.EvSubmitted, "ns/victim").CQ("batch").Obj(),
		MakeEvent(0, sim.EvSubmitted, "ns/spot").CQ("batch").Obj(),
		MakeEvent(0, sim.EvPlaced, "ns/victim").Obj(),
		MakeEvent(0, sim.EvPlaced, "ns/spot").Obj(),
		MakeEvent(60, sim.EvPreempted, "ns/victim").Obj(),
		MakeEvent(180, sim.EvEvicted, "ns/victim").Lost(1000).Obj(),
		MakeEvent(120, sim.EvInterrupted, "ns/spot").Obj(),
		MakeEvent(240, sim.EvEvicted, "ns/spot").Lost(2000).Obj(),
	} {
		c.OnEvent(e)
	}
	out := writeText(t, c.Report(secs(300)))
	rows := tableCells(t, out, "QUEUE")
	for _, name := range []string{"batch", "all"} {
		row := rows[name]
		if row["PREEMPTED"] != "1" || row["SPOT INTERRUPTED"] != "1" || row["EVICTED"] != "2" {
			t.Errorf("row %s = %v, want PREEMPTED 1, SPOT INTERRUPTED 1, EVICTED 2", name, row)
		}
	}
	if want := "1 preemption, 1 spot interruption, 2 evictions"; !strings.Contains(out, want) {
		t.Errorf("summary lacks %q:\n%s", want, out)
	}
}

func TestGPUEquivalentOf(t *testing.T) {
	mig := func(profile string) resources.Name { return resources.MIGResource(profile) }
	tests := []struct {
		name string
		v    resources.Vector
		want resources.MilliGPU
	}{
		{"whole GPUs", resources.Vector{resources.NvidiaGPU: 8}, 8000},
		{"H100 1g.10gb is one seventh", resources.Vector{mig("1g.10gb"): 7}, 7 * 142},
		{"3g.40gb is three sevenths", resources.Vector{mig("3g.40gb"): 2}, 2 * 428},
		{"A30 1g.6gb is one quarter", resources.Vector{mig("1g.6gb"): 4}, 1000},
		{"media-extension spelling", resources.Vector{mig("1g.10gb+me"): 1}, 142},
		{"profile no model offers: g sevenths", resources.Vector{mig("2g.99gb"): 1}, 285},
		{"whole GPUs and MIG add up", resources.Vector{resources.NvidiaGPU: 32, mig("1g.10gb"): 16, mig("2g.20gb"): 8, mig("3g.40gb"): 8}, 32000 + 16*142 + 8*285 + 8*428},
		{"gpu-milli covers the same GPUs: the larger wins", resources.Vector{resources.NvidiaGPU: 2, resources.GPUMilli: 2500}, 2500},
		{"gpu-milli below the native sum", resources.Vector{resources.NvidiaGPU: 4, resources.GPUMilli: 1000}, 4000},
		{"shared replicas are left out", resources.Vector{resources.NvidiaGPUShared: 4, mig("1g.10gb") + ".shared": 4}, 0},
		{"CPU is not a GPU", resources.Vector{resources.Name("cpu"): 64000}, 0},
	}
	for _, tc := range tests {
		if got := gpuEquivalentOf(tc.v); got != tc.want {
			t.Errorf("%s: gpuEquivalentOf(%v) = %d, want %d", tc.name, tc.v, got, tc.want)
		}
	}
}

// A queue whose quota is 8 whole GPUs and 14 MIG 1g.10gb instances has 8 + 2 GPUs of
// nominal quota (14 × 142 milli), and its MIG usage counts against it.
func TestQuotaTableCountsMIGInGPUEquivalents(t *testing.T) {
	nominal := resources.Vector{resources.NvidiaGPU: 8, resources.MIGResource("1g.10gb"): 14}
	used := resources.Vector{resources.NvidiaGPU: 2, resources.MIGResource("1g.10gb"): 7}
	c := NewKPICollector(KPIOptions{})
	c.OnSample(MakeState(0).QueueOf("cq", nominal, used, resources.Vector{}).Obj())
	r := c.Report(secs(10))
	if q := r.QuotaUse[0]; q.Nominal != 9988 || q.PeakUsed != 2994 || q.UtilisationPermille != 299 {
		t.Errorf("quota use = %+v, want nominal 9988, peak used 2994, utilisation 299‰", q)
	}
	out := writeText(t, r)
	if row := tableCells(t, out, "CLUSTERQUEUE")["cq"]; row["NOMINAL GPU-EQ"] != "9.988" || row["PEAK USED"] != "2.994" {
		t.Errorf("quota row = %v, want NOMINAL GPU-EQ 9.988 and PEAK USED 2.994:\n%s", row, out)
	}
	if !strings.Contains(out, "GPU-EQ: GPU-equivalents") {
		t.Errorf("quota table lacks the GPU-EQ footnote:\n%s", out)
	}
}
