package bench

import (
	"testing"
	"time"
)

type run struct {
	queue string
	gpus  int
	d     time.Duration
}

func TestRuntimePredictorPredict(t *testing.T) {
	s := time.Second
	history := []run{{"a", 1, 10 * s}, {"a", 1, 20 * s}, {"a", 1, 90 * s}, {"a", 8, 1000 * s}, {"b", 2, 7 * s}}
	tests := []struct {
		name   string
		method PredictMethod
		queue  string
		gpus   int
		want   time.Duration
		known  bool
	}{
		{name: "mean of the same queue and size", method: PredictMean, queue: "a", gpus: 1, want: 40 * s, known: true},
		{name: "median of the same queue and size", method: PredictRecentMedian, queue: "a", gpus: 1, want: 20 * s, known: true},
		{name: "queue when the size is new", method: PredictMean, queue: "a", gpus: 4, want: 280 * s, known: true},
		{name: "every job when the queue is new", method: PredictMean, queue: "c", gpus: 1, want: 225400 * time.Millisecond, known: true},
		{name: "every job, median", method: PredictRecentMedian, queue: "c", gpus: 1, want: 20 * s, known: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewRuntimePredictor(tc.method)
			for _, r := range history {
				p.Observe(r.queue, r.gpus, r.d)
			}
			got, known := p.Predict(tc.queue, tc.gpus)
			if got != tc.want || known != tc.known {
				t.Errorf("Predict(%s, %d) = %v, %v; want %v, %v", tc.queue, tc.gpus, got, known, tc.want, tc.known)
			}
		})
	}
}

// TestRuntimePredictorIsOnline: a predictor knows only what it was told, in order.
func TestRuntimePredictorIsOnline(t *testing.T) {
	p := NewRuntimePredictor(PredictMean)
	if got, known := p.Predict("a", 1); known || got != defaultRuntime {
		t.Fatalf("empty predictor: %v, %v; want the default %v, unknown", got, known, defaultRuntime)
	}
	if _, ok := p.Remaining("a", 1, 0); ok {
		t.Fatal("empty predictor knows a remaining time")
	}
	p.Observe("a", 1, time.Minute)
	if got, _ := p.Predict("a", 1); got != time.Minute {
		t.Fatalf("after one run of a minute: %v", got)
	}
	p.Observe("a", 1, 3*time.Minute)
	if got, _ := p.Predict("a", 1); got != 2*time.Minute {
		t.Fatalf("after runs of 1 and 3 minutes: %v, want the mean 2m", got)
	}
}

// TestRuntimePredictorRecentWindow: the median forgets runs older than its window.
func TestRuntimePredictorRecentWindow(t *testing.T) {
	p := NewRuntimePredictor(PredictRecentMedian)
	for range recentRuns {
		p.Observe("a", 1, time.Hour)
	}
	for range recentRuns / 2 {
		p.Observe("a", 1, time.Minute)
	}
	if got, _ := p.Predict("a", 1); got != time.Minute {
		t.Errorf("after %d hour-long runs then %d minute-long ones: %v, want a minute", recentRuns, recentRuns/2, got)
	}
}

func TestRuntimePredictorRemaining(t *testing.T) {
	s := time.Second
	p := NewRuntimePredictor(PredictMean)
	for _, d := range []time.Duration{10 * s, 100 * s, 200 * s, 1000 * s} {
		p.Observe("a", 1, d)
	}
	tests := []struct {
		ran  time.Duration
		want time.Duration
	}{
		{ran: 0, want: 100 * s},         // lower median of all four
		{ran: 50 * s, want: 150 * s},    // median of 100, 200, 1000 is 200
		{ran: 500 * s, want: 500 * s},   // only 1000 lasted longer
		{ran: 2000 * s, want: 2000 * s}, // outlived them all: as long again
		{ran: 10 * s, want: 190 * s},    // a run exactly as long as ran does not count as longer
	}
	for _, tc := range tests {
		got, ok := p.Remaining("a", 1, tc.ran)
		if !ok || got != tc.want {
			t.Errorf("Remaining after %v = %v, %v; want %v", tc.ran, got, ok, tc.want)
		}
	}
}

func TestRanks(t *testing.T) {
	tests := []struct {
		name string
		got  int32
		want int32
	}{
		{"qssf: GPUs x seconds", qssfRank(90*time.Second, 4), -360},
		{"qssf: clamped", qssfRank(1<<30*time.Second, 128), -(1<<31 - 1)},
		{"band: 360 s of service is in [256, 512)", bandRank(90*time.Second, 4), -9},
		{"band: 511 s is in the same band", bandRank(511*time.Second, 1), -9},
		{"band: 512 s is the next", bandRank(512*time.Second, 1), -10},
		{"sjf: seconds", sjfRank(90*time.Second, 8), -90},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func TestPredictionAccuracy(t *testing.T) {
	h := time.Hour
	r := &arrivalRanker{learner: learner{facts: map[string]jobFacts{"a": {run: h}, "b": {run: h}, "c": {run: h}, "d": {run: h}}},
		predicted: map[string]time.Duration{"a": h, "b": 3 * h, "c": h / 20, "d": h / 2}}
	// a exact, d half (within 2x, short), b 3x (within 10x), c 1/20 (short, beyond 10x).
	want := PredictionAccuracy{Jobs: 4, Within2xPermille: 500, Within10xPermille: 750, UnderPermille: 500}
	if got := r.accuracy(); got != want {
		t.Errorf("accuracy %+v, want %+v", got, want)
	}
}
