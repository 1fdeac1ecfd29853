package sim

import (
	"testing"
	"time"
)

// TestLogKeptOnlyOnRequest: without KeepLog the records reach the observers and are not
// kept (a fleet-size run makes millions); with it, Log holds the same records.
func TestLogKeptOnlyOnRequest(t *testing.T) {
	objs := MakeWorld().Pool("p", 1, 8, "").Queue("cq", 8).Job("a", 1, 4, 0, time.Hour, 0).Obj()
	for _, keep := range []bool{false, true} {
		seen := 0
		s, err := New(objs, Options{KeepLog: keep, Observers: []Observer{ObserverFuncs{Event: func(EventRecord) { seen++ }}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		kept := len(s.Log())
		if seen == 0 || (keep && kept != seen) || (!keep && kept != 0) {
			t.Fatalf("KeepLog %v: observers saw %d records, Log holds %d", keep, seen, kept)
		}
	}
}
