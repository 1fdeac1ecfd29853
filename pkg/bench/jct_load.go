package bench

import (
	"fmt"
	"io"
	"os"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// PhillyFiles name the two files of the Philly trace.
type PhillyFiles struct {
	Jobs string // philly.csv
	VCs  string // philly_vc.csv
}

// LoadPhilly reads the trace and imports the window's jobs on the window's cluster
// (nodePercent scales every virtual cluster's share when the window sets no node
// count; 0 means 100). Every job of the file is either imported or counted in Skipped.
func LoadPhilly(files PhillyFiles, w JCTWindow, nodePercent int) (*trace.PhillyImport, error) {
	from, to, err := w.Bounds()
	if err != nil {
		return nil, err
	}
	jobs, err := readPhillyFile(files.Jobs, trace.ReadPhillyJobs)
	if err != nil {
		return nil, err
	}
	vcs, err := readPhillyFile(files.VCs, trace.ReadPhillyVCs)
	if err != nil {
		return nil, err
	}
	return trace.ImportPhilly(jobs, vcs, trace.PhillyOptions{From: from, To: to, File: files.Jobs, Nodes: w.Nodes, NodePercent: nodePercent})
}

func readPhillyFile[T any](name string, read func(r io.Reader, file string) ([]T, error)) ([]T, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("philly trace: %w", err)
	}
	defer f.Close()
	return read(f, name)
}

// RunJCTReport replays the import under each policy in turn. each, when set, is called
// before each replay with the policy's index and returns extra observers for it (a
// progress bar) and a function called with its result.
func RunJCTReport(imp *trace.PhillyImport, w JCTWindow, policies []string, o JCTOptions,
	each func(i int, policy string) ([]sim.Observer, func(JCTResult))) (JCTReport, error) {
	objs := imp.Objects
	pool := objs.NodePools[0]
	rep := JCTReport{Window: w, Nodes: pool.Count, GPUs: pool.Count * pool.GPUsPerNode, Jobs: len(objs.Workloads),
		Skipped: imp.Skipped, UnknownVCs: imp.UnknownVCs}
	for i, p := range policies {
		po := o
		var done func(JCTResult)
		if each != nil {
			var extra []sim.Observer
			extra, done = each(i, p)
			po.Observers = append(append(po.Observers[:0:0], o.Observers...), extra...)
		}
		r, err := RunJCTWith(objs, p, po)
		if err != nil {
			return rep, err
		}
		if done != nil {
			done(r)
		}
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}
