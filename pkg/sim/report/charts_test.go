package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// WriteCharts is the chart part of WriteHTML, byte for byte, without the page around it.
func TestWriteChartsIsTheReportsCharts(t *testing.T) {
	r := sampleReport()
	var page, charts bytes.Buffer
	if err := WriteHTML(&page, r, "run"); err != nil {
		t.Fatal(err)
	}
	if err := WriteCharts(&charts, r); err != nil {
		t.Fatal(err)
	}
	c := charts.String()
	if !strings.Contains(page.String(), c) {
		t.Error("the page's charts differ from WriteCharts'")
	}
	for _, shell := range []string{"<html", "<body", "<style", "<script", "summary-queues"} {
		if strings.Contains(c, shell) {
			t.Errorf("WriteCharts writes %q: it is for a page that brings its own shell", shell)
		}
	}
	for _, id := range []string{`id="chart-allocation"`, `id="chart-capacity"`, `id="chart-wait-cdf"`, `id="chart-quota"`,
		`id="chart-borrowing"`, `id="heatmap-0"`, `id="chart-preemptions"`} {
		if !strings.Contains(c, id) {
			t.Errorf("WriteCharts lacks %s", id)
		}
	}
}

func TestWriteTimeChart(t *testing.T) {
	hostile := `<script>alert(1)</script>`
	for _, tc := range []struct {
		name string
		c    TimeChart
		want []string
	}{
		{"axis over the whole span, the last value held to its end",
			TimeChart{ID: "c1", Title: "pending", Note: "n", Unit: UnitCount, YLabel: "workloads", XLabel: "time since start",
				Series: []TimeSeries{{Name: "pending", Points: []TimePoint{{T: 0, V: 3}, {T: secs(60), V: 1}}}}, End: secs(300)},
			[]string{`id="c1"`, `data-x-tick="300000000000"`, ">workloads<", ">time since start<", ">1<", ">2<", ">3<", ">4<", `data-series="pending"`}},
		{"percentages up to 100%",
			TimeChart{ID: "c2", Unit: UnitPermille, Series: []TimeSeries{{Name: "all", Points: []TimePoint{{T: 0, V: 250}}}}, End: secs(10)},
			[]string{">100.0%<", ">% of capacity<", ">simulated time<"}},
		{"durations as durations",
			TimeChart{ID: "c3", Unit: UnitDuration, Series: []TimeSeries{{Name: "max wait", Points: []TimePoint{{T: 0, V: int64(2 * time.Hour)}}}}, End: secs(10)},
			[]string{">2h00m<", ">wait<"}},
		{"names escaped",
			TimeChart{ID: "c4", Title: hostile, Note: hostile, Unit: UnitMilliGPU, Series: []TimeSeries{{Name: hostile, Points: []TimePoint{{T: 0, V: 1500}}}}},
			[]string{"&lt;script&gt;", ">GPUs<"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteTimeChart(&buf, tc.c); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if _, err := html.Parse(strings.NewReader(out)); err != nil {
				t.Fatalf("does not parse: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("chart lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "<script>") {
				t.Error("a name is written unescaped")
			}
		})
	}
}
