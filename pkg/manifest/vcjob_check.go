package manifest

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// checkVCJob checks the job-level fields Gantry reads but does not schedule by: they do
// not change where or when the gang starts, but a typo in them is still a typo.
func checkVCJob(s vcJobSpec, sets []api.PodSet, c errs) {
	if s.MaxRetry < 0 {
		c.add("spec.maxRetry", "%d is negative", s.MaxRetry)
	}
	if t := s.TTLSecondsAfterFinished; t != nil && *t < 0 {
		c.add("spec.ttlSecondsAfterFinished", "%d is negative", *t)
	}
	var total int64
	for _, ps := range sets {
		total += int64(ps.Count)
	}
	if m := s.MinSuccess; m != nil && (*m < 1 || int64(*m) > total) {
		c.add("spec.minSuccess", "%d is not between 1 and the %d replicas of all tasks", *m, total)
	}
	checkVCPolicies(s.Policies, "spec.policies", c)
	checkVCPlugins(s.Plugins, sets, c)
	checkVCVolumes(s.Volumes, c)
	checkVCTaskNames(s.Tasks, sets, c)
}

// checkVCTask checks one task's fields beside its pods and minimum.
func checkVCTask(t vcTask, p string, c errs) {
	if t.MaxRetry < 0 {
		c.add(p+".maxRetry", "%d is negative", t.MaxRetry)
	}
	if t.TopologyPolicy != "" && !oneOf(t.TopologyPolicy, vcTopologyPolicies()) {
		c.add(p+".topologyPolicy", "unknown value %q: want %s", t.TopologyPolicy, strings.Join(vcTopologyPolicies(), ", "))
	}
	checkVCPolicies(t.Policies, p+".policies", c)
	if d := t.DependsOn; d != nil && d.Iteration != "" && d.Iteration != "any" && d.Iteration != "all" {
		c.add(p+".dependsOn.iteration", "unknown value %q: want any or all", d.Iteration)
	}
	if pp := t.PartitionPolicy; pp != nil {
		checkVCPartition(*pp, t, p+".partitionPolicy", c)
	}
}

// checkVCPartition: replicas split into totalPartitions groups of partitionSize pods.
func checkVCPartition(pp vcPartitionPolicy, t vcTask, p string, c errs) {
	switch {
	case pp.TotalPartitions <= 0:
		c.add(p+".totalPartitions", "%d is not positive", pp.TotalPartitions)
	case pp.PartitionSize <= 0:
		c.add(p+".partitionSize", "%d is not positive", pp.PartitionSize)
	case int64(pp.TotalPartitions)*int64(pp.PartitionSize) != int64(t.Replicas):
		c.add(p, "totalPartitions %d x partitionSize %d is not the task's %d replicas", pp.TotalPartitions, pp.PartitionSize, t.Replicas)
	case pp.MinPartitions < 0 || pp.MinPartitions > pp.TotalPartitions:
		c.add(p+".minPartitions", "%d is not between 0 and totalPartitions %d", pp.MinPartitions, pp.TotalPartitions)
	case pp.MinPartitions > 0 && t.MinAvailable != nil && int64(pp.MinPartitions)*int64(pp.PartitionSize) != int64(*t.MinAvailable):
		c.add(p+".minPartitions", "minPartitions %d x partitionSize %d is not the task's minAvailable %d", pp.MinPartitions, pp.PartitionSize, *t.MinAvailable)
	}
	if nt := pp.NetworkTopology; nt != nil {
		volcanoTopology(*nt, p+".networkTopology", c)
	}
}

// checkVCVolumes: each volume has a unique mount path and either an existing claim or a
// claim to create.
func checkVCVolumes(vs []vcVolume, c errs) {
	seen := map[string]bool{}
	for i, v := range vs {
		p := joinIndex("spec.volumes", i)
		switch {
		case v.MountPath == "":
			c.add(p+".mountPath", "missing")
		case strings.Contains(v.MountPath, ":"):
			c.add(p+".mountPath", "%q must not contain ':'", v.MountPath)
		case seen[v.MountPath]:
			c.add(p+".mountPath", "%q is mounted twice", v.MountPath)
		}
		seen[v.MountPath] = true
		if (v.VolumeClaim == nil) == (v.VolumeClaimName == "") {
			c.add(p, "set exactly one of volumeClaimName (an existing claim) and volumeClaim (a claim to create)")
		}
	}
}

// checkVCTaskNames: task names are unique, and dependsOn names other tasks without a
// cycle (Volcano starts a task once the tasks it depends on run; Gantry admits all tasks
// as one gang, see docs/manifests.md).
func checkVCTaskNames(tasks []vcTask, sets []api.PodSet, c errs) {
	index := map[string]int{}
	for i, ps := range sets {
		if j, dup := index[ps.Name]; dup {
			c.add(joinIndex("spec.tasks", i)+".name", "task %q is listed twice (first at spec.tasks[%d])", ps.Name, j)
			continue
		}
		index[ps.Name] = i
	}
	deps := make([][]int, len(tasks))
	for i, t := range tasks {
		if t.DependsOn == nil {
			continue
		}
		for k, name := range t.DependsOn.Name {
			p := joinIndex(joinIndex("spec.tasks", i)+".dependsOn.name", k)
			j, ok := index[name]
			switch {
			case !ok:
				c.add(p, "task %q not found in the job", name)
			case j == i:
				c.add(p, "a task cannot depend on itself")
			default:
				deps[i] = append(deps[i], j)
			}
		}
	}
	if cycle := dependencyCycle(deps); cycle != nil {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = sets[i].Name
		}
		c.add(joinIndex("spec.tasks", cycle[0])+".dependsOn", "tasks depend on each other in a cycle: %s", strings.Join(names, " -> "))
	}
}

// dependencyCycle returns one cycle of the graph (task indexes, first repeated last),
// found from the lowest task index, or nil.
func dependencyCycle(deps [][]int) []int {
	state := make([]int, len(deps)) // 0 new, 1 on the path, 2 done
	var path []int
	var visit func(int) []int
	visit = func(i int) []int {
		state[i] = 1
		path = append(path, i)
		next := append([]int(nil), deps[i]...)
		sort.Ints(next)
		for _, j := range next {
			if state[j] == 1 {
				for k, p := range path {
					if p == j {
						return append(append([]int(nil), path[k:]...), j)
					}
				}
			}
			if state[j] == 0 {
				if cyc := visit(j); cyc != nil {
					return cyc
				}
			}
		}
		path = path[:len(path)-1]
		state[i] = 2
		return nil
	}
	for i := range deps {
		if state[i] == 0 {
			if cyc := visit(i); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}
