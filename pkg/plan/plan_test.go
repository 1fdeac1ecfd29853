package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		plan Plan
		// wantErr is a substring of the error; empty means the plan is valid.
		wantErr string
	}{
		{name: "empty plan is valid", plan: MakePlan(1).Obj()},
		{name: "admission with its bindings", plan: MakePlan(1).Admit("ns/a", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/a", "a-1", "n1", "GPU-1").Obj()},
		{name: "admission without bindings", plan: MakePlan(1).Admit("ns/a", "cq").Obj(),
			wantErr: "admitted without bindings"},
		{name: "binding of a workload that is not admitted", plan: MakePlan(1).Bind("ns/a", "a-0", "n1").Obj(),
			wantErr: "is not admitted"},
		{name: "same device twice", plan: MakePlan(1).Admit("ns/a", "cq").Admit("ns/b", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/b", "b-0", "n1", "GPU-0").Obj(),
			wantErr: "bound to both"},
		{name: "equal GPU fractions share one ID and are not exclusive", plan: MakePlan(1).Admit("ns/a", "cq").Admit("ns/b", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0/share-320m").Bind("ns/b", "b-0", "n1", "GPU-0/share-320m").Obj()},
		{name: "same device ID on different nodes is fine", plan: MakePlan(1).Admit("ns/a", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/a", "a-1", "n2", "GPU-0").Obj()},
		{name: "admitted and rejected", plan: MakePlan(1).Admit("ns/a", "cq").Bind("ns/a", "a-0", "n1").Reject("ns/a").Obj(),
			wantErr: "both admitted and rejected"},
		{name: "reserved and rejected", plan: MakePlan(1).Reserve("ns/a").Reject("ns/a").Obj(),
			wantErr: "both reserved and rejected"},
		{name: "negative grace", plan: MakePlan(1).Notice("ns/v", -time.Second).Obj(), wantErr: "negative"},
		{name: "noticed and evicted", plan: MakePlan(1).Notice("ns/v", time.Minute).Evict("ns/v").Obj(),
			wantErr: "both noticed and evicted"},
		{name: "preempting a workload the plan admits", plan: MakePlan(1).Admit("ns/a", "cq").
			Bind("ns/a", "a-0", "n1").Evict("ns/a").Obj(), wantErr: "both admitted and preempted"},
		{name: "empty workload ID", plan: MakePlan(1).Reject("").Obj(), wantErr: "empty workload ID"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.plan.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestBindingsOfAndIsEmpty(t *testing.T) {
	p := MakePlan(2).Admit("ns/a", "cq").Admit("ns/b", "cq").
		Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/b", "b-0", "n2", "GPU-0").Bind("ns/a", "a-1", "n1", "GPU-1").Obj()
	got := p.BindingsOf("ns/a")
	if len(got) != 2 || got[0].Pod != "a-0" || got[1].Pod != "a-1" {
		t.Fatalf("BindingsOf(ns/a) = %+v, want pods a-0, a-1 in plan order", got)
	}
	if p.IsEmpty() {
		t.Fatal("IsEmpty() = true for a plan with admissions")
	}
	empty := MakePlan(3).Obj()
	if !empty.IsEmpty() {
		t.Fatal("IsEmpty() = false for an empty plan")
	}
	if u := p.Admissions[0].Usage(); u["nvidia.com/gpu"] != 1 {
		t.Fatalf("Usage() = %v, want nvidia.com/gpu=1", u)
	}
}

func TestLedgerNeverBindsTwice(t *testing.T) {
	l := NewLedger()
	a := MakePlan(1).Admit("ns/a", "cq").Bind("ns/a", "a-0", "n1", "GPU-0", "GPU-1").Obj()
	if err := l.Bind(a.Bindings); err != nil {
		t.Fatalf("first Bind: %v", err)
	}
	b := MakePlan(2).Admit("ns/b", "cq").Bind("ns/b", "b-0", "n1", "GPU-2").Bind("ns/b", "b-1", "n1", "GPU-1").Obj()
	if err := l.Bind(b.Bindings); err == nil || !strings.Contains(err.Error(), "already bound to workload ns/a") {
		t.Fatalf("second Bind = %v, want conflict on GPU-1", err)
	}
	if got := l.Bound("n1"); strings.Join(got, ",") != "GPU-0,GPU-1" {
		t.Fatalf("after refused Bind, Bound(n1) = %v, want only ns/a's devices (all-or-nothing)", got)
	}
	l.ReleaseWorkload("ns/a")
	if err := l.Bind(b.Bindings); err != nil {
		t.Fatalf("Bind after release: %v", err)
	}
	l.ReleaseNode("n1")
	if got := l.Bound("n1"); len(got) != 0 {
		t.Fatalf("Bound after ReleaseNode = %v, want none", got)
	}
}

// TestLedgerProperty: whatever sequence of binds and releases, no device ever has two owners
// and the ledger agrees with a simple model.
func TestLedgerProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := NewLedger()
		model := map[string]string{} // node/device -> workload
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			w := rapid.SampledFrom([]string{"ns/a", "ns/b", "ns/c"}).Draw(t, "workload")
			if rapid.Bool().Draw(t, "release") {
				l.ReleaseWorkload(api.WorkloadID(w))
				for k, o := range model {
					if o == w {
						delete(model, k)
					}
				}
				continue
			}
			node := rapid.SampledFrom([]string{"n1", "n2"}).Draw(t, "node")
			dev := rapid.SampledFrom([]string{"GPU-0", "GPU-1", "GPU-2"}).Draw(t, "device")
			p := MakePlan(int64(i)).Admit(w, "cq").Bind(w, "p", node, dev).Obj()
			err := l.Bind(p.Bindings)
			_, taken := model[node+"/"+dev]
			if taken != (err != nil) {
				t.Fatalf("Bind(%s on %s/%s): err=%v but model says taken=%v", w, node, dev, err, taken)
			}
			if err == nil {
				model[node+"/"+dev] = w
			}
		}
		for _, node := range []string{"n1", "n2"} {
			n := 0
			for k := range model {
				if strings.HasPrefix(k, node+"/") {
					n++
				}
			}
			if got := len(l.Bound(node)); got != n {
				t.Fatalf("Bound(%s) has %d devices, model %d", node, got, n)
			}
		}
	})
}

func TestTransitions(t *testing.T) {
	tests := []struct {
		from, to Phase
		want     bool // whether the move is allowed
	}{
		{Pending, Admitted, true},
		{Admitted, Running, true},
		{Running, Finished, true},
		{Running, Preempting, true},
		{Preempting, Evicted, true},
		{Running, Evicted, true}, // node failure: no notice
		{Evicted, Requeued, true},
		{Requeued, Pending, true},
		{Pending, Running, false}, // never runs without admission
		{Finished, Pending, false},
		{Evicted, Running, false},
	}
	for _, tc := range tests {
		if got := CanTransition(tc.from, tc.to); got != tc.want {
			t.Errorf("CanTransition(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
		_, err := Transition("ns/w", tc.from, tc.to)
		if (err == nil) != tc.want {
			t.Errorf("Transition(%s, %s) err = %v, want allowed=%v", tc.from, tc.to, err, tc.want)
		}
	}
	if _, err := Transition("ns/w", "Bogus", Pending); err == nil || !strings.Contains(err.Error(), "unknown phase") {
		t.Errorf("Transition from an unknown phase = %v, want unknown phase error", err)
	}
}
