package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

func TestJCTMarkdown(t *testing.T) {
	mins := func(n int) sim.Seconds { return sim.Seconds(time.Duration(n) * time.Minute) }
	rep := JCTReport{
		Window: JCTWindow{Name: "loaded", From: "2017-10-01", To: "2017-10-08"}, Nodes: 88, GPUs: 704, Jobs: 3,
		Skipped: map[string]int{"zero duration": 2, "beyond --limit": 1},
		Results: []JCTResult{{
			Policy: "gantry", Jobs: 3, Finished: 3, CPU: 1500 * time.Millisecond,
			Prediction: &PredictionAccuracy{Jobs: 3, Within2xPermille: 333, Within10xPermille: 1000, UnderPermille: 667},
			Wait:       report.Distribution{Mean: mins(10), P50: mins(1), P95: mins(60), P99: mins(120)},
			JCT:        report.Distribution{Mean: mins(70), P50: mins(30), P95: mins(600), P99: mins(1440)},
			ETA: []ETAAccuracy{{Runtimes: ETADeclared, Started: 2, SharePermille: 995, EarlyPermille: 5,
				AbsError: report.Distribution{P50: mins(20), Mean: mins(30)}, P90: mins(90)}},
		}},
	}
	var jct, eta strings.Builder
	if err := JCTMarkdown(&jct, rep); err != nil {
		t.Fatal(err)
	}
	if err := ETAMarkdown(&eta, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"loaded: 3 jobs submitted 2017-10-01 to 2017-10-08, 88 nodes (704 GPUs); skipped: 1 beyond --limit, 2 zero duration.",
		"| gantry | 3 | 10m00s | 1m00s | 1h00m | 2h00m | 1h10m | 30m00s | 10h00m | 1d00h | 0 | 1.5 s |\n\ngantry: the run times " +
			"predicted at arrival are within 2x of the real ones for 33.3% of 3 jobs, within 10x for 100.0%; 66.7% are short.\n",
	} {
		if !strings.Contains(jct.String(), want) {
			t.Errorf("JCT markdown lacks %q:\n%s", want, jct.String())
		}
	}
	if want := "| gantry | declared | 2 | 99.5% | 20m00s | 1h30m | 30m00s | 0.5% |"; !strings.Contains(eta.String(), want) {
		t.Errorf("ETA markdown lacks %q:\n%s", want, eta.String())
	}
}

func TestPermille(t *testing.T) {
	tests := []struct{ num, den, want int64 }{
		{0, 0, 0}, {1, 3, 333}, {2, 3, 667}, {1, 2000, 1}, {1, 2001, 0}, {5, 5, 1000},
	}
	for _, tc := range tests {
		if got := permille(tc.num, tc.den); got != tc.want {
			t.Errorf("permille(%d, %d) = %d, want %d", tc.num, tc.den, got, tc.want)
		}
	}
}

// TestETAAccuracySummary: absolute errors, the early share and the p90 of a probe's
// records; jobs never started and jobs without an ETA are counted apart.
func TestETAAccuracySummary(t *testing.T) {
	sec := func(n int) *sim.Seconds { s := sim.Seconds(time.Duration(n) * time.Second); return &s }
	p := &etaProbe{kinds: []etaKind{{name: ETADeclared}}, eta: map[string][]*sim.Seconds{}, start: map[string]time.Duration{}}
	// Ten started jobs with ETAs 1..10 s early or late, one without an ETA, one never started.
	for i := 1; i <= 10; i++ {
		id := string(rune('a' + i))
		p.start[id] = 100 * time.Second
		if i%2 == 0 {
			p.eta[id] = []*sim.Seconds{sec(100 - i)} // started i s late
		} else {
			p.eta[id] = []*sim.Seconds{sec(100 + i)} // started i s early
		}
	}
	p.eta["none"], p.start["none"] = []*sim.Seconds{nil}, time.Minute
	p.eta["never"] = []*sim.Seconds{sec(5)}
	a := p.accuracy()[0]
	if a.Queued != 12 || a.Started != 11 || a.WithETA != 10 || a.SharePermille != 909 || a.EarlyPermille != 500 {
		t.Errorf("%+v: want 12 queued, 11 started, 10 with an ETA (90.9%%), half early", a)
	}
	if a.AbsError.P50.Duration() != 5*time.Second || a.P90.Duration() != 9*time.Second || a.AbsError.P99.Duration() != 10*time.Second {
		t.Errorf("errors p50 %v p90 %v p99 %v: want 5s, 9s, 10s", a.AbsError.P50.Duration(), a.P90.Duration(), a.AbsError.P99.Duration())
	}
}
