package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
	"golang.org/x/net/html"
)

// renderHTML renders r and parses the page.
func renderHTML(t *testing.T, r Report) *html.Node {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r, "view"); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		t.Fatalf("report does not parse: %v", err)
	}
	return doc
}

// findAll returns every element below n for which match holds, in document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tagged(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag }
}

func withAttr(key string) func(*html.Node) bool {
	return func(n *html.Node) bool { return hasAttr(n, key) }
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

// text is the text content of n.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// byID is the element with the given id, or fails the test.
func byID(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	found := findAll(doc, func(n *html.Node) bool { return attr(n, "id") == id })
	if len(found) != 1 {
		t.Fatalf("%d elements with id %q, want 1", len(found), id)
	}
	return found[0]
}

// clipping matches style that fixes a width or hides overflow, the ways a table or chart
// gets cut at the right edge of a narrow window (max-width is allowed: it shrinks).
var clipping = regexp.MustCompile(`(^|[;{\s])(width\s*:|min-width\s*:|overflow(-x)?\s*:\s*(hidden|clip)|white-space\s*:\s*(pre|nowrap)\s*[;}]|text-overflow)`)

func TestHTMLSummaryTablesNotCut(t *testing.T) {
	doc := renderHTML(t, sampleReport())
	tables := findAll(doc, tagged("table"))
	if len(tables) != 2 {
		t.Fatalf("%d summary tables, want the queue and the quota table", len(tables))
	}
	for _, tb := range tables {
		box := tb.Parent
		if box == nil || box.Data != "div" || !strings.Contains(attr(box, "style"), "overflow-x:auto") {
			t.Errorf("table %q is not inside a horizontally scrolling box", attr(tb, "id"))
		}
	}
	for _, n := range findAll(doc, func(*html.Node) bool { return true }) {
		if s := attr(n, "style"); clipping.MatchString(s) {
			t.Errorf("<%s style=%q> can cut content", n.Data, s)
		}
		if n.Data == "style" && clipping.MatchString(text(n)) {
			t.Errorf("style sheet %q can cut content", text(n))
		}
		if n.Data == "svg" && !strings.Contains(attr(n, "style"), "max-width:100%") {
			t.Errorf("a chart does not shrink to the page width")
		}
	}
}

// The HTML queue table has the text table's columns (the text table's header split on
// its two-space column gaps), so the two cannot drift apart.
func TestHTMLSummaryColumnsMatchText(t *testing.T) {
	r := sampleReport()
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	firstLine, _, _ := strings.Cut(buf.String(), "\n")
	want := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(firstLine), -1)
	var got []string
	for _, th := range findAll(byID(t, renderHTML(t, r), "summary-queues"), tagged("th")) {
		got = append(got, text(th))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("HTML columns %q, text columns %q", got, want)
	}
}

// finishedEarly is a run whose work ends at 50s of a 100s run: n1's two GPUs and one of
// n2's are busy from 10s to 50s, then everything is free until the end.
func finishedEarly() Report {
	c := NewKPICollector(KPIOptions{})
	c.OnEvent(MakeEvent(0, sim.EvSubmitted, "ns/a").CQ("team-a").Obj())
	c.OnSample(MakeState(0).Node(MakeNode("n1").GPU("T4", "exclusive", 0).GPU("T4", "exclusive", 0)).
		Node(MakeNode("n2").GPU("T4", "exclusive", 0).GPU("T4", "exclusive", 0)).Obj())
	c.OnEvent(MakeEvent(10, sim.EvPlaced, "ns/a").Obj())
	c.OnSample(MakeState(10).Node(MakeNode("n1").GPU("T4", "exclusive", 1000).GPU("T4", "exclusive", 1000)).
		Node(MakeNode("n2").GPU("T4", "exclusive", 500).GPU("T4", "exclusive", 0)).Obj())
	c.OnEvent(MakeEvent(50, sim.EvFinished, "ns/a").Obj())
	c.OnSample(MakeState(50).Node(MakeNode("n1").GPU("T4", "exclusive", 0).GPU("T4", "exclusive", 0)).
		Node(MakeNode("n2").GPU("T4", "exclusive", 0).GPU("T4", "exclusive", 0)).Obj())
	return c.Report(secs(100))
}

func TestHTMLHeatmapAtBusiestMomentWithNamesAndScale(t *testing.T) {
	r := finishedEarly()
	if len(r.Heatmaps) != 2 || heatTotal(r.Heatmaps[len(r.Heatmaps)-1]) != 0 {
		t.Fatalf("scenario: want a peak map and an all-free end map, got %+v", r.Heatmaps)
	}
	doc := renderHTML(t, r)
	maps := findAll(doc, func(n *html.Node) bool { return n.Data == "figure" && strings.HasPrefix(attr(n, "id"), "heatmap-") })
	if len(maps) == 0 {
		t.Fatal("no heat map drawn")
	}
	for i, m := range maps {
		var milli int
		for _, cell := range findAll(m, withAttr("data-milli")) {
			var v int
			for _, ch := range attr(cell, "data-milli") {
				v = v*10 + int(ch-'0')
			}
			milli += v
		}
		if milli == 0 {
			t.Errorf("heat map %q is drawn with nothing allocated", attr(m, "id"))
		}
		if i == 0 && (milli != 2500 || !strings.Contains(text(m), "busiest moment, 10s")) {
			t.Errorf("first heat map: %d milli allocated, title %q; want the busiest moment, 10s, with 2500", milli, text(m.FirstChild))
		}
		rows := findAll(m, withAttr("data-row"))
		if len(rows) != 2 {
			t.Errorf("heat map %q has %d rows, want one per node", attr(m, "id"), len(rows))
		}
		for _, row := range rows {
			labels := findAll(row, withAttr("data-label"))
			if len(labels) != 1 || text(labels[0]) != attr(row, "data-row") {
				t.Errorf("row %q is not labelled with its node name", attr(row, "data-row"))
			}
		}
		scale := findAll(m, func(n *html.Node) bool { return attr(n, "class") == "scale" })
		if len(scale) != 1 || attr(scale[0], "data-min") != "0" || attr(scale[0], "data-max") != "1000" {
			t.Fatalf("heat map %q has no colour scale from 0 to 1000 milli", attr(m, "id"))
		}
		ends := map[string]string{}
		for _, e := range findAll(scale[0], withAttr("data-scale")) {
			ends[attr(e, "data-scale")] = text(e)
		}
		if ends["min"] != "0 (free)" || ends["max"] != "1 GPU (full)" {
			t.Errorf("colour scale ends %q", ends)
		}
	}
	if note := byID(t, doc, "heatmap-1"); note.Data != "p" || !strings.Contains(text(note), "no GPU is allocated") {
		t.Errorf("the all-free end map should be a line of text, got <%s> %q", note.Data, text(note))
	}
}

// Row labels stay readable on large clusters: rows shrink to a floor and only every
// n-th row is named, so labels never overlap (every row keeps its name as a tooltip).
func TestHeatmapLayoutRows(t *testing.T) {
	tests := []struct {
		nodes            int
		rowH             int64
		labelEvery       int
		longName, labelW int64
	}{
		{nodes: 2, rowH: 14, labelEvery: 1, longName: 2, labelW: 2*heatLabelRune + 10},
		{nodes: 100, rowH: 14, labelEvery: 1, longName: 40, labelW: heatMaxLabel*heatLabelRune + 10},
		{nodes: 200, rowH: 7, labelEvery: 2, longName: 5, labelW: 5*heatLabelRune + 10},
		{nodes: 1213, rowH: 2, labelEvery: 7, longName: 5, labelW: 5*heatLabelRune + 10},
	}
	for _, tc := range tests {
		h := Heatmap{}
		for i := 0; i < tc.nodes; i++ {
			h.Rows = append(h.Rows, HeatmapRow{Node: strings.Repeat("n", int(tc.longName))[:min(int(tc.longName), 1+i)], GPUs: make([]resources.MilliGPU, 8)})
		}
		l := layoutHeatmap(h)
		if l.rowH != tc.rowH || l.labelEvery != tc.labelEvery || l.left != tc.labelW || l.cols != 8 {
			t.Errorf("%d nodes: rowH %d, labelEvery %d, label width %d, cols %d; want %d, %d, %d, 8",
				tc.nodes, l.rowH, l.labelEvery, l.left, l.cols, tc.rowH, tc.labelEvery, tc.labelW)
		}
	}
}

// The time axis of every time chart ends at the run's end, also where the last sample or
// preemption comes earlier.
func TestHTMLTimeAxesCoverRun(t *testing.T) {
	tests := []struct {
		name string
		r    Report
	}{
		{"preemptions end at 50s of 100s", sampleReport()},
		{"work ends at 50s of 100s", finishedEarly()},
	}
	for _, tc := range tests {
		doc := renderHTML(t, tc.r)
		for _, id := range []string{"chart-allocation", "chart-capacity", "chart-borrowing", "chart-preemptions"} {
			ticks := findAll(byID(t, doc, id), withAttr("data-x-tick"))
			if len(ticks) == 0 {
				t.Fatalf("%s: %s has no time ticks", tc.name, id)
			}
			first, last := attr(ticks[0], "data-x-tick"), attr(ticks[len(ticks)-1], "data-x-tick")
			if first != "0" || last != "100000000000" || text(ticks[len(ticks)-1]) != sim.FormatDuration(tc.r.End) {
				t.Errorf("%s: %s axis from %s to %s (%q), want 0 to the run's end %s", tc.name, id, first, last, text(ticks[len(ticks)-1]), sim.FormatDuration(tc.r.End))
			}
		}
	}
}

func TestHTMLEveryPanelExplained(t *testing.T) {
	doc := renderHTML(t, sampleReport())
	figures := findAll(doc, tagged("figure"))
	if len(figures) < 8 {
		t.Fatalf("%d panels, want at least 8", len(figures))
	}
	for _, f := range figures {
		caps := findAll(f, tagged("figcaption"))
		notes := findAll(f, func(n *html.Node) bool { return n.Data == "p" && attr(n, "class") == "note" })
		if len(caps) != 1 || strings.TrimSpace(text(caps[0])) == "" || len(notes) != 1 || len(strings.TrimSpace(text(notes[0]))) < 30 {
			t.Errorf("panel %q lacks a title or a one-line explanation", attr(f, "id"))
		}
	}
	capacity := text(byID(t, doc, "chart-capacity"))
	for _, term := range []string{"free pieces:", "stranded:", "FGD fragment:"} {
		if !strings.Contains(capacity, term) {
			t.Errorf("capacity panel does not explain %q", term)
		}
	}
}
