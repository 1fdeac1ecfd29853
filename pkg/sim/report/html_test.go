package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
	"golang.org/x/net/html"
)

// sampleReport is a small run: two queues, a preemption with lost work, two samples.
func sampleReport() Report {
	c := NewKPICollector(KPIOptions{})
	c.OnEvent(MakeEvent(0, sim.EvSubmitted, "ns/a").CQ("team-a").Obj())
	c.OnEvent(MakeEvent(0, sim.EvSubmitted, "ns/b").CQ("team-b").Obj())
	c.OnSample(MakeState(0).Node(MakeNode("n1").GPU("T4", "exclusive", 0).GPU("T4", "exclusive", 0)).Queue("team-a", 1, 0, 0).Queue("team-b", 1, 0, 0).
		Pending("ns/a", resources.Vector{resources.NvidiaGPU: 1}).Obj())
	c.OnEvent(MakeEvent(10, sim.EvPlaced, "ns/a").Obj())
	c.OnEvent(MakeEvent(10, sim.EvPlaced, "ns/b").Obj())
	c.OnSample(MakeState(10).Node(MakeNode("n1").GPU("T4", "exclusive", 1000).GPU("T4", "exclusive", 1000)).Queue("team-a", 1, 1, 0).Queue("team-b", 1, 1, 0).Obj())
	c.OnEvent(MakeEvent(40, sim.EvPreempted, "ns/b").Obj())
	c.OnEvent(MakeEvent(50, sim.EvEvicted, "ns/b").Lost(3_600_000).Obj())
	c.OnEvent(MakeEvent(90, sim.EvFinished, "ns/a").Obj())
	return c.Report(secs(100))
}

func TestWriteHTMLWellFormedWithData(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, "test <run>"); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("report does not parse: %v", err)
	}
	ids := map[string]bool{}
	series := map[string]bool{}
	heatCells := 0
	var data string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				switch a.Key {
				case "id":
					ids[a.Val] = true
				case "data-series":
					series[a.Val] = true
				case "data-node":
					heatCells++
				case "src", "href":
					t.Errorf("<%s %s=%q>: the report must not load anything", n.Data, a.Key, a.Val)
				}
			}
			if n.Data == "script" {
				if attr(n, "type") != "application/json" {
					t.Errorf("report has an executable script")
				}
				if n.FirstChild != nil {
					data = n.FirstChild.Data
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, id := range []string{"chart-allocation", "chart-capacity", "chart-wait-cdf", "chart-quota", "chart-borrowing", "heatmap-0", "heatmap-1", "chart-preemptions", "kpi-data"} {
		if !ids[id] {
			t.Errorf("report has no element with id %q", id)
		}
	}
	for _, s := range []string{"all", "T4/exclusive", "team-a", "team-b", "stranded"} {
		if !series[s] {
			t.Errorf("report has no line for series %q", s)
		}
	}
	// Two heat maps (peak and end) of one node with two GPUs.
	if heatCells != 4 {
		t.Errorf("heat map cells = %d, want 4", heatCells)
	}
	var back Report
	if err := json.Unmarshal([]byte(data), &back); err != nil {
		t.Fatalf("embedded data is not the report's JSON: %v", err)
	}
	if back.Overall.Submitted != 2 || back.LostGPUMilliSeconds != 3_600_000 || len(back.QuotaUse) != 2 {
		t.Errorf("embedded data = %+v", back.Overall)
	}
	if !strings.Contains(buf.String(), "test &lt;run&gt;") || !strings.Contains(buf.String(), "1.00 GPU-hours lost") {
		t.Errorf("title not escaped or lost GPU-hours missing")
	}
}

func TestWriteHTMLDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteHTML(&a, sampleReport(), "x"); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&b, sampleReport(), "x"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two renders of the same report differ")
	}
}

func TestWriteTextTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"team-a", "team-b", "LOST GPU-H", "1.00", "UTILISATION"} {
		if !strings.Contains(out, want) {
			t.Errorf("text table lacks %q:\n%s", want, out)
		}
	}
}

func TestFormatters(t *testing.T) {
	tests := []struct{ got, want string }{
		{FormatPermille(734), "73.4%"},
		{FormatPermille(-5), "-0.5%"},
		{FormatMilli(12345), "12.345"},
		{FormatGPUHours(3_600_000 * 3 / 2), "1.50"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
