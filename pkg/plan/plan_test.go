package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/internal/testing/plans"
	"github.com/gantry-sched/gantry/pkg/plan"
)

type validateCase struct {
	name string
	plan plan.Plan
	// wantErr is a substring of the error; empty means the plan is valid.
	wantErr string
}

func validateCases() []validateCase {
	return []validateCase{
		{name: "empty plan is valid", plan: plans.MakePlan(1).Obj()},
		{name: "admission with its bindings", plan: plans.MakePlan(1).Admit("ns/a", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/a", "a-1", "n1", "GPU-1").Obj()},
		{name: "admission without bindings", plan: plans.MakePlan(1).Admit("ns/a", "cq").Obj(),
			wantErr: "admitted without bindings"},
		{name: "binding of a workload that is not admitted", plan: plans.MakePlan(1).Bind("ns/a", "a-0", "n1").Obj(),
			wantErr: "is not admitted"},
		{name: "same device twice", plan: plans.MakePlan(1).Admit("ns/a", "cq").Admit("ns/b", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/b", "b-0", "n1", "GPU-0").Obj(),
			wantErr: "bound to both"},
		{name: "equal GPU fractions share one ID and are not exclusive", plan: plans.MakePlan(1).Admit("ns/a", "cq").Admit("ns/b", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0/share-320m").Bind("ns/b", "b-0", "n1", "GPU-0/share-320m").Obj()},
		{name: "same device ID on different nodes is fine", plan: plans.MakePlan(1).Admit("ns/a", "cq").
			Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/a", "a-1", "n2", "GPU-0").Obj()},
		{name: "admitted and rejected", plan: plans.MakePlan(1).Admit("ns/a", "cq").Bind("ns/a", "a-0", "n1").Reject("ns/a").Obj(),
			wantErr: "both admitted and rejected"},
		{name: "reserved and rejected", plan: plans.MakePlan(1).Reserve("ns/a").Reject("ns/a").Obj(),
			wantErr: "both reserved and rejected"},
		{name: "negative grace", plan: plans.MakePlan(1).Notice("ns/v", -time.Second).Obj(), wantErr: "negative"},
		{name: "noticed and evicted", plan: plans.MakePlan(1).Notice("ns/v", time.Minute).Evict("ns/v").Obj(),
			wantErr: "both noticed and evicted"},
		{name: "preempting a workload the plan admits", plan: plans.MakePlan(1).Admit("ns/a", "cq").
			Bind("ns/a", "a-0", "n1").Evict("ns/a").Obj(), wantErr: "both admitted and preempted"},
		{name: "empty workload ID", plan: plans.MakePlan(1).Reject("").Obj(), wantErr: "empty workload ID"},
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range validateCases() {
		t.Run(tc.name, func(t *testing.T) { checkValidated(t, tc, tc.plan.Validate()) })
	}
}

// One Validator over every case, forwards and backwards, with a big plan between (its
// maps are made anew for the small ones after it): what one plan left in the maps must
// never make the next one fail or pass.
func TestValidatorReused(t *testing.T) {
	big := plans.MakePlan(2)
	for i := range 20000 { // past the size at which the maps are made anew
		big = big.Reject(fmt.Sprintf("ns/w%d", i))
	}
	cases := validateCases()
	back := slices.Clone(cases)
	slices.Reverse(back)
	seq := append(append(cases, validateCase{name: "big", plan: big.Obj()}), back...)
	var v plan.Validator
	for _, tc := range seq {
		t.Run(tc.name, func(t *testing.T) { checkValidated(t, tc, v.Validate(&tc.plan)) })
	}
}

func checkValidated(t *testing.T, tc validateCase, err error) {
	t.Helper()
	if tc.wantErr == "" {
		if err != nil {
			t.Fatalf("Validate() = %v, want nil", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
		t.Fatalf("Validate() = %v, want error containing %q", err, tc.wantErr)
	}
}

func TestBindingsOfAndIsEmpty(t *testing.T) {
	p := plans.MakePlan(2).Admit("ns/a", "cq").Admit("ns/b", "cq").
		Bind("ns/a", "a-0", "n1", "GPU-0").Bind("ns/b", "b-0", "n2", "GPU-0").Bind("ns/a", "a-1", "n1", "GPU-1").Obj()
	got := p.BindingsOf("ns/a")
	if len(got) != 2 || got[0].Pod != "a-0" || got[1].Pod != "a-1" {
		t.Fatalf("BindingsOf(ns/a) = %+v, want pods a-0, a-1 in plan order", got)
	}
	if p.IsEmpty() {
		t.Fatal("IsEmpty() = true for a plan with admissions")
	}
	empty := plans.MakePlan(3).Obj()
	if !empty.IsEmpty() {
		t.Fatal("IsEmpty() = false for an empty plan")
	}
	if u := p.Admissions[0].Usage(); u["nvidia.com/gpu"] != 1 {
		t.Fatalf("Usage() = %v, want nvidia.com/gpu=1", u)
	}
}

func TestTransitions(t *testing.T) {
	tests := []struct {
		from, to plan.Phase
		want     bool // whether the move is allowed
	}{
		{plan.Pending, plan.Admitted, true},
		{plan.Admitted, plan.Running, true},
		{plan.Running, plan.Finished, true},
		{plan.Running, plan.Preempting, true},
		{plan.Preempting, plan.Evicted, true},
		{plan.Running, plan.Evicted, true}, // node failure: no notice
		{plan.Evicted, plan.Requeued, true},
		{plan.Requeued, plan.Pending, true},
		{plan.Pending, plan.Running, false}, // never runs without admission
		{plan.Finished, plan.Pending, false},
		{plan.Evicted, plan.Running, false},
	}
	for _, tc := range tests {
		if got := plan.CanTransition(tc.from, tc.to); got != tc.want {
			t.Errorf("CanTransition(%s, %s) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
		_, err := plan.Transition("ns/w", tc.from, tc.to)
		if (err == nil) != tc.want {
			t.Errorf("Transition(%s, %s) err = %v, want allowed=%v", tc.from, tc.to, err, tc.want)
		}
	}
	if _, err := plan.Transition("ns/w", "Bogus", plan.Pending); err == nil || !strings.Contains(err.Error(), "unknown phase") {
		t.Errorf("Transition from an unknown phase = %v, want unknown phase error", err)
	}
}
