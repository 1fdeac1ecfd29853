package bench

import (
	"fmt"
	"time"
)

// JCTWindow is a named replay of the Philly trace: the submission window and the
// cluster size.
type JCTWindow struct {
	Name string
	// From and To bound submission days, both inclusive (UTC dates).
	From, To string
	// Nodes is the cluster's node count (0: every virtual cluster's own share, 352
	// nodes, 2,816 GPUs).
	Nodes int
	Doc   string
}

// The windows `gantry bench jct --window` knows.
const (
	// JCTWindowFull is every job of October and November 2017 (the window queueing
	// studies replay) on the whole cluster, which they load to about a sixth of its
	// GPUs: few jobs queue.
	JCTWindowFull = "full"
	// JCTWindowLoaded is the first eight days of October 2017 (11,657 jobs) on 88
	// nodes (704 GPUs, a quarter of every virtual cluster's share): the jobs' GPU time
	// averages 550 busy GPUs over the eight days, a load of 0.78, and on October 8 it
	// exceeds the GPUs, so queues form and the policies can be told apart. Longer
	// loaded windows replay too, but the preemptive policies then take minutes (the
	// engine's victim searches, see docs/simulator-kpis.md).
	JCTWindowLoaded = "loaded"
)

// JCTWindows lists the named windows.
func JCTWindows() []JCTWindow {
	return []JCTWindow{
		{Name: JCTWindowFull, From: "2017-10-01", To: "2017-11-30",
			Doc: "Oct-Nov 2017 on the whole cluster (352 nodes, 2,816 GPUs)"},
		{Name: JCTWindowLoaded, From: "2017-10-01", To: "2017-10-08", Nodes: 88,
			Doc: "Oct 1-8 2017 on 88 nodes (704 GPUs, load 0.78)"},
	}
}

// JCTWindowNamed returns the window called name.
func JCTWindowNamed(name string) (JCTWindow, error) {
	var names []string
	for _, w := range JCTWindows() {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return JCTWindow{}, fmt.Errorf("bench jct: unknown window %q: want one of %v", name, names)
}

// Bounds parses the window's days: From at midnight and the midnight after To (the
// exclusive end).
func (w JCTWindow) Bounds() (from, to time.Time, err error) {
	from, err = time.Parse(time.DateOnly, w.From)
	if err != nil {
		return from, to, fmt.Errorf("window %s: from %q: want a date like 2017-10-01", w.Name, w.From)
	}
	last, err := time.Parse(time.DateOnly, w.To)
	if err != nil || last.Before(from) {
		return from, to, fmt.Errorf("window %s: to %q: want a date like 2017-11-30, not before from", w.Name, w.To)
	}
	return from, last.AddDate(0, 0, 1), nil
}
