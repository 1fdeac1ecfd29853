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
	elapsed time.Duration   // first create call to the last bind seen
	podLat  []time.Duration // pod seen -> bound, ascending
	gangLat []time.Duration // gang created -> all its pods bound, ascending; nil: no gangs
}

// rate is pods bound per second over the whole run.
func (r benchResult) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.pods) / r.elapsed.Seconds()
}

// resultOf turns the clocks' records into a result. Every pod must be bound and, for
// gangs, every gang's submission time known.
func resultOf(binder string, start time.Time, pods []podTimes, gangs *gangClock) (benchResult, error) {
	r := benchResult{binder: binder, pods: len(pods)}
	allBound := map[string]time.Time{}
	for _, p := range pods {
		if p.bound.IsZero() {
			return r, fmt.Errorf("%s: pod %s never bound", binder, p.name)
		}
		r.podLat = append(r.podLat, p.bound.Sub(p.seen))
		if d := p.bound.Sub(start); d > r.elapsed {
			r.elapsed = d
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

// benchTable is the side-by-side markdown table: every result with its ratio to
// kube-scheduler's rate and to the raw create+bind rate; missing rows say failed.
func benchTable(rows []string, results map[string]benchResult, scheduler, raw string) string {
	var ks, rw *benchResult
	if r, ok := results[scheduler]; ok {
		ks = &r
	}
	if r, ok := results[raw]; ok {
		rw = &r
	}
	var b strings.Builder
	b.WriteString("| binder | pods/s | vs kube-scheduler | vs raw create+bind | pod seen → bound p50 / p99 | gang created → all bound p50 / p99 |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, name := range rows {
		r, ok := results[name]
		if !ok {
			fmt.Fprintf(&b, "| %s | failed | – | – | – | – |\n", name)
			continue
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %s |\n", name, r.rate(), ratioCell(r.rate(), ks), ratioCell(r.rate(), rw),
			latencyCell(r.podLat), latencyCell(r.gangLat))
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

// TestBenchTableRatios: ratios are to kube-scheduler's and the raw rate, and a
// scenario without a result is shown as failed.
func TestBenchTableRatios(t *testing.T) {
	results := map[string]benchResult{
		"raw": {binder: "raw", pods: 400, elapsed: time.Second},
		"ks":  {binder: "ks", pods: 100, elapsed: time.Second, podLat: []time.Duration{time.Second}},
		"gantry": {binder: "gantry", pods: 200, elapsed: time.Second, podLat: []time.Duration{time.Millisecond},
			gangLat: []time.Duration{2 * time.Second}},
	}
	got := benchTable([]string{"raw", "ks", "gantry", "jobs"}, results, "ks", "raw")
	for _, want := range []string{"| gantry | 200 | 2.00x | 0.50x | 1 ms / 1 ms | 2.00 s / 2.00 s |", "| jobs | failed |",
		"| ks | 100 | 1.00x | 0.25x | 1.00 s / 1.00 s | – |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}
