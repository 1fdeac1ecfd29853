package admission

import (
	"fmt"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
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

// TestPropertyCompiledShortKeepsAnswer: a Short question compiled before usage changed
// (on a clone that shares the structure) answers as a fresh Short on the quota as it is
// now, and a question compiled against another structure is asked again from scratch.
func TestPropertyCompiledShortKeepsAnswer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := genWorld(t)
		other := genWorld(t)
		before := w.m.Quota.Clone()
		type probe struct {
			cq    string
			wl    *api.Workload
			check ShortCheck
			alien ShortCheck
		}
		var probes []probe
		for _, cq := range w.cqs {
			size := rapid.IntRange(1, 12).Draw(t, "size")
			pods := int32(rapid.IntRange(1, 2).Draw(t, "pods"))
			wl := gt.MakeWorkload("ns-"+cq, fmt.Sprintf("probe-%d", size)).Pods(pods).Request(gpu, fmt.Sprint(size)).Obj()
			probes = append(probes, probe{cq: cq, wl: wl, check: before.CompileShort(wl, cq), alien: other.m.Quota.CompileShort(wl, cq)})
		}
		steps := rapid.IntRange(0, 20).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			w.submit(t)
		}
		for _, p := range probes {
			want := w.m.Quota.Short(p.wl, p.cq)
			if got := w.m.Quota.ShortBy(&p.check); got != want {
				t.Fatalf("compiled Short(%s, %s) = %v after usage changed; fresh Short = %v", p.wl.ID(), p.cq, got, want)
			}
			if got := w.m.Quota.ShortBy(&p.alien); got != want {
				t.Fatalf("Short(%s, %s) compiled on another structure = %v; fresh Short = %v", p.wl.ID(), p.cq, got, want)
			}
		}
	})
}
