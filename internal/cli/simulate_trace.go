package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
)

// traceFormats is the --trace help text: the formats simulate and explain replay.
const traceFormats = "workload trace FORMAT:FILES (repeatable): generic:FILE, openb:NODES_CSV,PODS_CSV " +
	"(the trace's nodes and one queue sized to them), philly:JOBS_CSV[,VC_CSV] (one ClusterQueue per " +
	"virtual cluster; VC_CSV defaults to philly_vc.csv next to JOBS_CSV)"

// loadTrace reads one --trace value into objects to add to the run; notes are lines for
// stderr (jobs a trace importer left out, by reason).
func loadTrace(spec string) (*api.Objects, []string, error) {
	format, rest, ok := strings.Cut(spec, ":")
	files := strings.Split(rest, ",")
	if !ok || rest == "" {
		return nil, nil, fmt.Errorf("--trace %q: want FORMAT:FILES (generic:FILE, openb:NODES_CSV,PODS_CSV or philly:JOBS_CSV[,VC_CSV])", spec)
	}
	switch format {
	case "generic":
		if len(files) != 1 {
			return nil, nil, fmt.Errorf("--trace %q: generic takes one file", spec)
		}
		var ws []api.Workload
		err := withFile(spec, files[0], func(r io.Reader) (err error) {
			ws, err = trace.ReadGenericWorkloads(r, files[0])
			return err
		})
		return &api.Objects{Workloads: ws}, nil, err
	case "openb":
		if len(files) != 2 {
			return nil, nil, fmt.Errorf("--trace %q: openb takes NODES_CSV,PODS_CSV", spec)
		}
		return loadOpenBTrace(spec, files[0], files[1])
	case "philly":
		if len(files) > 2 {
			return nil, nil, fmt.Errorf("--trace %q: philly takes JOBS_CSV[,VC_CSV]", spec)
		}
		vc := filepath.Join(filepath.Dir(files[0]), "philly_vc.csv")
		if len(files) == 2 {
			vc = files[1]
		}
		return loadPhillyTrace(spec, files[0], vc)
	}
	return nil, nil, fmt.Errorf("--trace %q: unknown format %q: want generic, openb or philly", spec, format)
}

func loadOpenBTrace(spec, nodesFile, podsFile string) (*api.Objects, []string, error) {
	nodes, err := os.Open(nodesFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--trace %q: nodes: %w", spec, err)
	}
	defer nodes.Close()
	pods, err := os.Open(podsFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--trace %q: pods: %w", spec, err)
	}
	defer pods.Close()
	objs, err := trace.ImportOpenB(nodes, nodesFile, pods, podsFile, trace.OpenBOptions{})
	return objs, nil, err
}

func loadPhillyTrace(spec, jobsFile, vcFile string) (*api.Objects, []string, error) {
	var jobs []trace.PhillyJob
	var vcs []trace.PhillyVC
	err := withFile(spec, jobsFile, func(r io.Reader) (err error) {
		jobs, err = trace.ReadPhillyJobs(r, jobsFile)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	err = withFile(spec, vcFile, func(r io.Reader) (err error) {
		vcs, err = trace.ReadPhillyVCs(r, vcFile)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	imp, err := trace.ImportPhilly(jobs, vcs, trace.PhillyOptions{File: jobsFile})
	if err != nil {
		return nil, nil, fmt.Errorf("--trace %q: %w", spec, err)
	}
	reasons := make([]string, 0, len(imp.Skipped))
	for why := range imp.Skipped {
		reasons = append(reasons, why)
	}
	sort.Strings(reasons)
	notes := make([]string, 0, len(reasons))
	for _, why := range reasons {
		notes = append(notes, fmt.Sprintf("philly trace %s: %d jobs left out: %s", jobsFile, imp.Skipped[why], why))
	}
	return imp.Objects, notes, nil
}

// withFile opens path for read, naming the --trace value in errors.
func withFile(spec, path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("--trace %q: %w", spec, err)
	}
	defer f.Close()
	return read(f)
}

// mergeObjects appends every object of src to dst.
func mergeObjects(dst, src *api.Objects) {
	dst.Flavors = append(dst.Flavors, src.Flavors...)
	dst.ClusterQueues = append(dst.ClusterQueues, src.ClusterQueues...)
	dst.LocalQueues = append(dst.LocalQueues, src.LocalQueues...)
	dst.Cohorts = append(dst.Cohorts, src.Cohorts...)
	dst.PriorityClasses = append(dst.PriorityClasses, src.PriorityClasses...)
	dst.Topologies = append(dst.Topologies, src.Topologies...)
	dst.Namespaces = append(dst.Namespaces, src.Namespaces...)
	dst.Workloads = append(dst.Workloads, src.Workloads...)
	dst.NodePools = append(dst.NodePools, src.NodePools...)
	dst.Nodes = append(dst.Nodes, src.Nodes...)
	dst.Events = append(dst.Events, src.Events...)
}
