package admission

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"pgregory.net/rapid"
)

// TestPropertyShortMeansNoFit: over random cohort trees and usage, whenever Short says a
// workload is short, Assign answers NoFit; and Short does say so sometimes.
func TestPropertyShortMeansNoFit(t *testing.T) {
	short, asked := 0, 0
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		steps := rapid.IntRange(0, 20).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			w.submit(t)
		}
		for _, cq := range w.cqs {
			for size := 1; size <= 12; size++ {
				pods := int32(rapid.IntRange(1, 2).Draw(t, "pods"))
				wl := gt.MakeWorkload("ns-"+cq, fmt.Sprintf("probe-%d", size)).Pods(pods).Request(gpu, fmt.Sprint(size)).Obj()
				asked++
				if !w.m.Quota.Short(wl, cq) {
					continue
				}
				short++
				if a := w.m.Quota.Assign(wl, cq); a.Mode != NoFit {
					t.Fatalf("Short(%s x%d of %d GPUs, %s) but Assign answers %s", wl.ID(), pods, size, cq, a.Mode)
				}
			}
		}
	})
	if short == 0 || short == asked {
		t.Fatalf("Short answered true %d of %d times; want some of each", short, asked)
	}
}
