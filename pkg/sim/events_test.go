package sim

import (
	"encoding/json"
	"testing"
	"time"
)

func TestSecondsJSON(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string // the JSON number written
	}{
		{0, "0"},
		{90 * time.Second, "90"},
		{1500 * time.Millisecond, "1.5"},
		{1001 * time.Millisecond, "1.001"},
		{1010 * time.Millisecond, "1.01"},
		{-2500 * time.Millisecond, "-2.5"},
		{1234567 * time.Microsecond, "1.234"}, // below a millisecond is dropped
	}
	for _, tc := range tests {
		b, err := json.Marshal(Seconds(tc.in))
		if err != nil || string(b) != tc.want {
			t.Errorf("Seconds(%v) = %s, %v; want %s", tc.in, b, err, tc.want)
		}
	}
}

func TestEventRecordOmitsFieldsThatDoNotApply(t *testing.T) {
	b, err := json.Marshal(EventRecord{T: Seconds(time.Minute), Event: EvSubmitted, Workload: "ns/a", ClusterQueue: "cq"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"t":60,"event":"submitted","workload":"ns/a","clusterQueue":"cq"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestEventQueueOrdersByTimeThenSequence(t *testing.T) {
	var q eventQueue
	q.schedule(simEvent{at: 5 * time.Second, wl: "c"})
	q.schedule(simEvent{at: time.Second, wl: "a"})
	q.schedule(simEvent{at: 5 * time.Second, wl: "d"})
	q.schedule(simEvent{at: time.Second, wl: "b"})
	var got string
	for q.Len() > 0 {
		got += string(q.next().wl)
	}
	if got != "abcd" {
		t.Errorf("order = %s, want abcd (time, then scheduling order)", got)
	}
	if _, ok := q.peek(); ok {
		t.Error("peek on an empty queue reported an event")
	}
}
