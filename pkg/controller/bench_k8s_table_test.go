//go:build k8sscale

package controller

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchResult is one binder's measurement.
type benchResult struct {
	binder  string
	pods    int
	elapsed time.Duration   // the timer's start (first create call, or the binder's start) to the last bind seen
	podLat  []time.Duration // per pod, ascending: seen -> bound, or (bind only) binder start -> bound
	gangLat []time.Duration // per gang, ascending: created -> all bound, or (bind only) binder start -> all bound; nil: no gangs
	first   time.Duration   // the timer's start to the first bind seen
}

// rate is pods bound per second over the whole run.
func (r benchResult) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.pods) / r.elapsed.Seconds()
}

// resultOf turns the clocks' records into a result. Every pod must be bound and, for
// gangs, every gang's submission time known. With bindOnly every pod and gang existed
// before start, so each latency runs from start: the time a pod or gang waited for the
// binder to exist says nothing about the binder.
func resultOf(binder string, start time.Time, pods []podTimes, gangs *gangClock, bindOnly bool) (benchResult, error) {
	r := benchResult{binder: binder, pods: len(pods)}
	allBound := map[string]time.Time{}
	for _, p := range pods {
		if p.bound.IsZero() {
			return r, fmt.Errorf("%s: pod %s never bound", binder, p.name)
		}
		from := p.seen
		if bindOnly {
			from = start
		}
		r.podLat = append(r.podLat, p.bound.Sub(from))
		d := p.bound.Sub(start)
		if d > r.elapsed {
			r.elapsed = d
		}
		if d < r.first || len(r.podLat) == 1 {
			r.first = d
		}
		if gangs != nil && p.bound.After(allBound[p.gang]) {
			allBound[p.gang] = p.bound
		}
	}
	for gang, done := range allBound {
		created, ok := gangs.get(gang)
		if !ok {
			return r, fmt.Errorf("%s: gang %q of the bound pods was never submitted", binder, gang)
		}
		if bindOnly {
			created = start
		}
		r.gangLat = append(r.gangLat, done.Sub(created))
	}
	sortDurations(r.podLat)
	sortDurations(r.gangLat)
	return r, nil
}

func sortDurations(d []time.Duration) { sort.Slice(d, func(i, j int) bool { return d[i] < d[j] }) }

// percentile is the nearest-rank pct-th percentile of ascending durations (0 if none).
func percentile(sorted []time.Duration, pct int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (pct*len(sorted) + 99) / 100 // ceil(pct% of n)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// latencyCell is "p50 / p99", or a dash without samples.
func latencyCell(sorted []time.Duration) string {
	if len(sorted) == 0 {
		return "–"
	}
	return fmtDuration(percentile(sorted, 50)) + " / " + fmtDuration(percentile(sorted, 99))
}

// fmtDuration keeps three significant figures: 12 ms, 1.23 s, 45.6 s.
func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// ratioCell is rate/base as "0.69x", or a dash when the base is missing.
func ratioCell(rate float64, base *benchResult) string {
	if base == nil || base.rate() == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2fx", rate/base.rate())
}

// benchColumns names a table's columns that differ between create+bind and bind only;
// the bind-only table also shows the binder's start to its first bind (its start-up
// cost, which pods/s includes).
type benchColumns struct {
	vsRaw, pod, gang string
	first            bool
}

func columnsFor(bindOnly bool) benchColumns {
	if bindOnly {
		return benchColumns{"vs raw bind", "binder start → pod bound p50 / p99", "binder start → gang all bound p50 / p99", true}
	}
	return benchColumns{"vs raw create+bind", "pod seen → bound p50 / p99", "gang created → all bound p50 / p99", false}
}

// benchTable is one side-by-side markdown table of scenarios (raw first,
// kube-scheduler second, as benchScenarios and benchBindOnlyScenarios list them), with
// results keyed by subtest name: every result with its ratio to kube-scheduler's rate
// and to the raw rate; missing rows say failed.
func benchTable(bindOnly bool, scenarios []benchScenario, results map[string]benchResult) string {
	base := func(i int) *benchResult {
		if i >= len(scenarios) {
			return nil
		}
		if r, ok := results[scenarios[i].sub]; ok {
			return &r
		}
		return nil
	}
	rw, ks := base(0), base(1)
	cols := columnsFor(bindOnly)
	var b strings.Builder
	fmt.Fprintf(&b, "| binder | pods/s | vs kube-scheduler | %s | %s | %s |", cols.vsRaw, cols.pod, cols.gang)
	rule := "|---|---|---|---|---|---|"
	if cols.first {
		b.WriteString(" binder start → first bind |")
		rule += "---|"
	}
	b.WriteString("\n" + rule + "\n")
	for _, sc := range scenarios {
		r, ok := results[sc.sub]
		if !ok {
			fmt.Fprintf(&b, "| %s | failed | – | – | – | – |", sc.row)
		} else {
			fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %s |", sc.row, r.rate(), ratioCell(r.rate(), ks), ratioCell(r.rate(), rw),
				latencyCell(r.podLat), latencyCell(r.gangLat))
		}
		switch {
		case cols.first && ok:
			b.WriteString(" " + fmtDuration(r.first) + " |")
		case cols.first:
			b.WriteString(" – |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestBenchPercentile: nearest rank, so p50 of 1..10 is 5 and p99 is the maximum.
func TestBenchPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 10; i++ {
		d = append(d, time.Duration(i)*time.Second)
	}
	for _, tc := range []struct {
		pct  int
		want time.Duration
	}{{50, 5 * time.Second}, {99, 10 * time.Second}, {1, time.Second}, {100, 10 * time.Second}} {
		if got := percentile(d, tc.pct); got != tc.want {
			t.Errorf("p%d = %s, want %s", tc.pct, got, tc.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing = %s, want 0", got)
	}
}

// TestBenchTableRatios: ratios are to kube-scheduler's and the raw rate of the same
// table, a scenario without a result is shown as failed, and the bind-only table names
// its latencies from the binder's start.
func TestBenchTableRatios(t *testing.T) {
	results := map[string]benchResult{
		"raw": {binder: "raw", pods: 400, elapsed: time.Second},
		"ks":  {binder: "ks", pods: 100, elapsed: time.Second, podLat: []time.Duration{time.Second}},
		"gantry": {binder: "gantry", pods: 200, elapsed: time.Second, podLat: []time.Duration{time.Millisecond},
			gangLat: []time.Duration{2 * time.Second}},
		"raw-bind": {binder: "raw", pods: 800, elapsed: time.Second, first: 5 * time.Millisecond},
		"ks-bind":  {binder: "ks", pods: 200, elapsed: time.Second},
	}
	scenarios := func(subs ...string) []benchScenario {
		var out []benchScenario
		for _, s := range subs {
			out = append(out, benchScenario{row: strings.TrimSuffix(s, "-bind"), sub: s})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		bindOnly bool
		subs     []string
		want     []string
	}{
		{"create+bind", false, []string{"raw", "ks", "gantry", "jobs"}, []string{"| gantry | 200 | 2.00x | 0.50x | 1 ms / 1 ms | 2.00 s / 2.00 s |",
			"| jobs | failed | – | – | – | – |\n", "| ks | 100 | 1.00x | 0.25x | 1.00 s / 1.00 s | – |\n",
			"| vs raw create+bind | pod seen → bound p50 / p99 | gang created → all bound p50 / p99 |\n|---|---|---|---|---|---|\n"}},
		{"bind only", true, []string{"raw-bind", "ks-bind", "gantry", "jobs"}, []string{"| gantry | 200 | 1.00x | 0.25x |",
			"| raw | 800 | 4.00x | 1.00x | – | – | 5 ms |\n", "| jobs | failed | – | – | – | – | – |\n",
			"| vs raw bind | binder start → pod bound p50 / p99 | binder start → gang all bound p50 / p99 | binder start → first bind |\n|---|---|---|---|---|---|---|\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := benchTable(tc.bindOnly, scenarios(tc.subs...), results)
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("table lacks %q:\n%s", want, got)
				}
			}
		})
	}
}

// TestBenchResultOrigin: create+bind latencies run from each pod's first sighting and
// each gang's submission; bind-only ones from the binder's start, and the rate and the
// first bind from start either way.
func TestBenchResultOrigin(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	pods := []podTimes{
		{name: "a", gang: "g", node: "n", seen: at(1), bound: at(12)},
		{name: "b", gang: "g", node: "n", seen: at(2), bound: at(14)},
	}
	gangs := newGangClock()
	gangs.mark("g", at(0))
	for _, tc := range []struct {
		name     string
		start    time.Time
		bindOnly bool
		pod      []time.Duration
		gang     time.Duration
		elapsed  time.Duration
		first    time.Duration
	}{
		{"create+bind", at(0), false, []time.Duration{11 * time.Second, 12 * time.Second}, 14 * time.Second, 14 * time.Second, 12 * time.Second},
		{"bind only", at(10), true, []time.Duration{2 * time.Second, 4 * time.Second}, 4 * time.Second, 4 * time.Second, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := resultOf("x", tc.start, pods, gangs, tc.bindOnly)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.podLat) != fmt.Sprint(tc.pod) || len(r.gangLat) != 1 || r.gangLat[0] != tc.gang || r.elapsed != tc.elapsed || r.first != tc.first {
				t.Errorf("pod %v gang %v elapsed %s first %s, want pod %v gang %s elapsed %s first %s",
					r.podLat, r.gangLat, r.elapsed, r.first, tc.pod, tc.gang, tc.elapsed, tc.first)
			}
		})
	}
	if _, err := resultOf("x", at(0), pods, newGangClock(), true); err == nil {
		t.Error("resultOf with a gang never submitted: no error")
	}
}
