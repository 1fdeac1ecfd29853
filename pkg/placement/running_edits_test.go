package placement

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// TestRunningByEndResetEditedSequence: a RunningByEnd brought up to date from a
// driver's account of the positions it wrote (ResetEdited), over lists that change as a
// simulator's do (starts appended, finishes swapped out, ends moved, gangs added by Add,
// bad entries, wholesale rewrites, plain Resets between), always gives what a fresh
// NewRunningByEnd gives: the same order, or the same error.
func TestRunningByEndResetEditedSequence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r RunningByEnd
		var ed RunningEdits
		var rs []Running
		fresh := freshRunning(t)
		for step := rapid.IntRange(1, 25).Draw(t, "steps"); step > 0; step-- {
			for n := rapid.IntRange(0, 6).Draw(t, "changes"); n > 0; n-- {
				// Mostly the changes a simulator makes between cycles; now and then a bad
				// entry or a wholesale rewrite, which the full path must take over.
				switch op := rapid.IntRange(0, 19).Draw(t, "op"); {
				case op <= 6 || len(rs) == 0:
					rs = append(rs, fresh())
					ed.Touch(len(rs) - 1)
				case op <= 12:
					i := rapid.IntRange(0, len(rs)-1).Draw(t, "finish")
					rs[i] = rs[len(rs)-1]
					rs = rs[:len(rs)-1]
					ed.Touch(i)
				case op <= 16:
					i := rapid.IntRange(0, len(rs)-1).Draw(t, "moved")
					rs[i].ExpectedEnd = time.Unix(int64(rapid.IntRange(0, 20).Draw(t, "newEnd")), 0)
					ed.Touch(i)
				case op == 17:
					rs = append(rs, rs[rapid.IntRange(0, len(rs)-1).Draw(t, "dup")]) // a duplicate ID
					ed.Touch(len(rs) - 1)
				case op == 18:
					i := rapid.IntRange(0, len(rs)-1).Draw(t, "bad")
					rs[i].GPUMilli = -1
					ed.Touch(i)
				default:
					rs = slices.Clone(rs)
					slices.Reverse(rs)
					ed.Everything()
				}
			}
			if rapid.IntRange(0, 7).Draw(t, "fixAll") == 0 { // sometimes a clean list again
				rs = clean(rs)
				ed.Everything()
			}
			want, wantErr := NewRunningByEnd(slices.Clone(rs))
			var err error
			if rapid.IntRange(0, 4).Draw(t, "plainReset") == 0 {
				err = r.Reset(slices.Clone(rs)) // the account keeps what it holds
			} else {
				err = r.ResetEdited(slices.Clone(rs), &ed)
			}
			switch {
			case (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()):
				t.Fatalf("error %v, fresh %v", err, wantErr)
			case err == nil && !slices.EqualFunc(r.List(), want.List(), func(a, b *Running) bool { return a.ID == b.ID && a.ExpectedEnd.Equal(b.ExpectedEnd) }):
				t.Fatalf("order %v, fresh %v", ids(r.List()), ids(want.List()))
			}
			if err == nil && rapid.Bool().Draw(t, "add") {
				if err := r.Add(fresh()); err != nil {
					t.Fatal(err)
				}
			}
			if err != nil { // the caller would not keep a list it cannot use
				rs = clean(rs)
				ed.Everything()
			}
		}
	})
}

// freshRunning makes running workloads with new IDs (w0001, w0002, ...) and ends drawn
// from 21 instants, so that ends tie often.
func freshRunning(t *rapid.T) func() Running {
	next := 0
	return func() Running {
		next++
		return Running{ID: api.WorkloadID(fmt.Sprintf("w%04d", next)),
			ExpectedEnd: time.Unix(int64(rapid.IntRange(0, 20).Draw(t, "end")), 0)}
	}
}

// clean drops bad amounts and repeated IDs.
func clean(rs []Running) []Running {
	rs = slices.DeleteFunc(rs, func(x Running) bool { return x.GPUMilli < 0 })
	seen := map[api.WorkloadID]bool{}
	return slices.DeleteFunc(rs, func(x Running) bool { dup := seen[x.ID]; seen[x.ID] = true; return dup })
}

// Another account than the one last taken, or none, is not trusted: a full Reset.
func TestRunningByEndResetEditedOtherAccount(t *testing.T) {
	rs := []Running{{ID: "a", ExpectedEnd: time.Unix(5, 0)}, {ID: "b", ExpectedEnd: time.Unix(9, 0)}}
	var r RunningByEnd
	var mine, other RunningEdits
	if err := r.ResetEdited(rs, &mine); err != nil {
		t.Fatal(err)
	}
	rs[0].ExpectedEnd = time.Unix(20, 0) // written without a Touch on mine
	other.Touch(0)
	if err := r.ResetEdited(rs, &other); err != nil {
		t.Fatal(err)
	}
	if got := ids(r.List()); !slices.Equal(got, []api.WorkloadID{"b", "a"}) {
		t.Fatalf("order %v after a change told by another account, want [b a]", got)
	}
	if len(other.at) != 0 || other.all {
		t.Fatalf("the account taken was not emptied: %+v", other)
	}
}
