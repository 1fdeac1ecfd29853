package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
)

func TestE3TmpPhillyWeek(t *testing.T) {
	if os.Getenv("E3_PHILLY") == "" {
		t.Skip("manual")
	}
	jf, _ := os.Open("/work/shared/traces/philly/philly.csv")
	jobs, err := ReadPhillyJobs(jf, "philly.csv")
	if err != nil {
		t.Fatal(err)
	}
	vf, _ := os.Open("/work/shared/traces/philly/philly_vc.csv")
	vcs, err := ReadPhillyVCs(vf, "philly_vc.csv")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2017, 10, 1, 0, 0, 0, 0, time.UTC)
	imp, err := ImportPhilly(jobs, vcs, PhillyOptions{From: from, To: from.AddDate(0, 0, 7), File: "philly.csv", NodePercent: 25})
	if err != nil {
		t.Fatal(err)
	}
	for _, pol := range []string{os.Getenv("E3_POLICY")} {
		pobjs, cfg, err := JCTObjects(imp.Objects, pol)
		if err != nil {
			t.Fatal(err)
		}
		for _, retry := range []bool{false, true} {
			start := time.Now()
			s, err := New(pobjs, Options{Seed: 42, Engine: cfg, RetryAll: retry, Observers: []Observer{NewKPICollector(KPIOptions{CapacityEvery: time.Hour})}, Placer: engine.NewPlacer(engine.PlacerConfig{Flavors: pobjs.Flavors, Seed: 42})})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
			f, _ := os.Create(fmt.Sprintf("/tmp/e3/log_%s_%v.jsonl", pol, retry))
			enc := json.NewEncoder(f)
			for _, r := range s.Log() {
				_ = enc.Encode(r)
			}
			f.Close()
			h := 0
			for _, r := range s.Log() {
				h = h*31 + int(r.T) + len(r.Workload) + len(r.Event)
			}
			t.Logf("%s jobs=%d retryAll=%v wall=%s cycles=%d considered=%d log=%d hash=%d", pol, len(pobjs.Workloads), retry, time.Since(start), s.cycle, s.considered, len(s.Log()), h)
		}
	}
}
