package bench

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// The allocation plot averages a policy's seeds step by step, in % of capacity.
func TestFragAllocationPlotMeansSeeds(t *testing.T) {
	runs := []FragRun{
		{Policy: "fgd", Seed: 1, Capacity: 10000, Curve: []FragPoint{{ArrivedPermille: 100, Allocated: 1000}, {ArrivedPermille: 200, Allocated: 1800}}},
		{Policy: "fgd", Seed: 2, Capacity: 10000, Curve: []FragPoint{{ArrivedPermille: 100, Allocated: 1000}, {ArrivedPermille: 200, Allocated: 2000}}},
		{Policy: "random", Seed: 1, Capacity: 10000, Curve: []FragPoint{{ArrivedPermille: 100, Allocated: 500}}},
	}
	p := FragAllocationPlot("t", runs)
	if len(p.Series) != 2 || p.Series[0].Name != "fgd" || p.Series[1].Name != "random" {
		t.Fatalf("series %+v, want fgd then random", p.Series)
	}
	want := []report.PlotPoint{{X: 100, Y: 100}, {X: 200, Y: 190}}
	if got := p.Series[0].Points; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("fgd points %+v, want %+v (the seeds' mean in permille of capacity)", got, want)
	}
	checkSVG(t, p, "fgd", "random")
}

// The wait CDF stops at the largest p95 and climbs to the share reached there.
func TestJCTWaitCDFPlotStopsAtP95(t *testing.T) {
	waits := func(mins ...int) report.Distribution {
		d := report.Distribution{}
		for _, m := range mins {
			d.Values = append(d.Values, time.Duration(m)*time.Minute)
		}
		return d
	}
	fifo := waits(0, 10, 20, 600)
	fifo.P95 = sim.Seconds(20 * time.Minute)
	srtf := waits(0, 0, 5, 30)
	srtf.P95 = sim.Seconds(5 * time.Minute)
	p := JCTWaitCDFPlot("t", JCTReport{Results: []JCTResult{{Policy: "fifo", Wait: fifo}, {Policy: "srtf", Wait: srtf}}})
	if p.XMax != int64(20*time.Minute) || p.YMax != 1000 || p.YMin != 200 {
		t.Fatalf("axes end at x %d y %d and start at y %d, want the largest p95 (20m), 100%% and 20%% (fifo: 1 of 4 jobs did not wait)", p.XMax, p.YMax, p.YMin)
	}
	last := func(s report.PlotSeries) report.PlotPoint { return s.Points[len(s.Points)-1] }
	if got := last(p.Series[0]); got.X != int64(20*time.Minute) || got.Y != 750 {
		t.Errorf("fifo ends at %+v, want 75%% at 20m (3 of 4 jobs)", got)
	}
	if got := last(p.Series[1]); got.X != int64(20*time.Minute) || got.Y != 750 {
		t.Errorf("srtf ends at %+v, want 75%% at the axis end (the 30m wait is past it)", got)
	}
	checkSVG(t, p, "fifo", "srtf")
}

// checkSVG writes p and checks it is well-formed XML with one line per series.
func checkSVG(t *testing.T, p report.Plot, names ...string) {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(b.String()))
	lines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed SVG: %v\n%s", err, b.String())
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	if lines != len(names) {
		t.Errorf("%d lines drawn, want %d", lines, len(names))
	}
	for _, n := range names {
		if !strings.Contains(b.String(), `data-series="`+n+`"`) {
			t.Errorf("no line for %s", n)
		}
	}
}
