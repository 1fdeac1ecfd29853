package manifest

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// The values Volcano's webhook lets users write (Volcano's internal events and actions,
// such as OutOfSync or SyncJob, are refused as there). Functions, not package variables:
// nothing can change them.
func vcEvents() []string {
	return []string{"*", "PodFailed", "PodEvicted", "PodPending", "Unknown", "TaskCompleted", "TaskFailed", "JobUpdated"}
}

func vcActions() []string {
	return []string{"AbortJob", "RestartJob", "RestartTask", "RestartPod", "RestartPartition", "TerminateJob", "CompleteJob", "ResumeJob"}
}

// vcPlugins are the job plugins Volcano's job controller registers.
func vcPlugins() []string {
	return []string{"env", "hcclrank", "mpi", "pytorch", "ray", "ssh", "svc", "tensorflow"}
}

func vcTopologyPolicies() []string {
	return []string{"none", "best-effort", "restricted", "single-numa-node"}
}

func oneOf(v string, allowed []string) bool {
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// checkVCPolicies checks lifecycle policies as Volcano's webhook does: each reacts to
// events or to an exit code, with a known action; no event or exit code twice; "*"
// alone. Gantry models one of them: a workload evicted or preempted is requeued whole
// (RestartJob on PodEvicted); the others are read and checked only.
func checkVCPolicies(ps []vcPolicy, path string, c errs) {
	seenEvent := map[string]bool{}
	seenCode := map[int32]bool{}
	for i, p := range ps {
		pp := joinIndex(path, i)
		events := p.Events
		if p.Event != "" {
			events = append(append([]string(nil), events...), p.Event)
		}
		switch {
		case len(events) > 0 && p.ExitCode != nil:
			c.add(pp+".exitCode", "set event(s) or exitCode, not both")
		case len(events) == 0 && p.ExitCode == nil:
			c.add(pp, "a policy needs event, events or exitCode")
		case p.ExitCode != nil && *p.ExitCode == 0:
			c.add(pp+".exitCode", "0 is not a failure exit code")
		case p.ExitCode != nil && seenCode[*p.ExitCode]:
			c.add(pp+".exitCode", "exit code %d has a policy already", *p.ExitCode)
		case p.ExitCode != nil:
			seenCode[*p.ExitCode] = true
		}
		for _, e := range events {
			switch {
			case !oneOf(e, vcEvents()):
				c.add(pp+".event", "unknown event %q: want one of %s", e, strings.Join(vcEvents(), ", "))
			case seenEvent[e]:
				c.add(pp+".event", "event %s has a policy already", e)
			}
			seenEvent[e] = true
		}
		if p.Action == "" && len(events) > 0 {
			c.add(pp+".action", "missing: want one of %s", strings.Join(vcActions(), ", "))
		} else if p.Action != "" && !oneOf(p.Action, vcActions()) {
			c.add(pp+".action", "unknown action %q: want one of %s", p.Action, strings.Join(vcActions(), ", "))
		}
		if p.Timeout != nil && p.Timeout.Duration < 0 {
			c.add(pp+".timeout", "%s is negative", p.Timeout.Duration)
		}
	}
	if seenEvent["*"] && len(seenEvent) > 1 {
		c.add(path, `event "*" covers every event: no other event may have a policy`)
	}
}

// checkVCPlugins: only the plugins Volcano registers; mpi's master task must exist.
func checkVCPlugins(plugins map[string][]string, sets []api.PodSet, c errs) {
	for _, name := range sortedKeys(plugins) {
		if !oneOf(name, vcPlugins()) {
			c.add(joinKey("spec.plugins", name), "unknown plugin %q: want one of %s", name, strings.Join(vcPlugins(), ", "))
		}
	}
	args, ok := plugins["mpi"]
	if !ok {
		return
	}
	master := pluginFlag(args, "master", "master")
	for _, ps := range sets {
		if ps.Name == master {
			return
		}
	}
	c.add(joinKey("spec.plugins", "mpi"), "the MPI master task %q is not a task of the job (set --master=NAME)", master)
}

// pluginFlag reads "--name=value", "-name=value" or "--name value" from plugin arguments.
func pluginFlag(args []string, name, def string) string {
	for i, a := range args {
		flag := strings.TrimLeft(a, "-")
		if flag == a {
			continue
		}
		if k, v, found := strings.Cut(flag, "="); found && k == name {
			return v
		}
		if flag == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return def
}
