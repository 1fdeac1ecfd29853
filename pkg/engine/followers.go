package engine

import "github.com/gantry-sched/gantry/pkg/api"

// Followers lets a cycle reach parked workloads without being handed every one of them.
//
// Workloads of one equivalence class (ClusterQueue, shape, priority) that admission
// refused wait for quota. When quota is freed in their cohort tree, a cycle that tried
// every one of them would, in queue order, admit some and then see admission refuse
// the next: with one pod set, a flavor's answer only gets worse as the cycle's
// admissions add usage, so after one member gets NoFit every later member of its class
// does too. So the scheduler wakes only a class's first parked member, and the cycle
// asks for the next one each time a member of the class took any step but a NoFit. The
// members come in at their own place in the order (visits), so the cycle makes the same
// decisions as one handed every member, visiting each class up to its first NoFit.
type Followers interface {
	// Next returns the next parked member of class in queue order, no longer parked,
	// or false when none is left.
	Next(class string) (Pending, bool)
	// ClusterQueues names the ClusterQueues whose members Next may return (the cycle
	// orders them by the shares as it starts).
	ClusterQueues() []string
	// Visit tells that the cycle is about to visit a workload of Input.QuotaSeekers: it
	// is parked no longer.
	Visit(id api.WorkloadID)
	// NextSeeker returns the next member of slot-seeker class (Input.SlotSeekers) after
	// those handed already this cycle, or false when none is left.
	NextSeeker(class string) (Pending, bool)
}

func followerQueues(f Followers) []string {
	if f == nil {
		return nil
	}
	return f.ClusterQueues()
}

// follow asks for the next member of p's class after p's visit, unless p's attempt
// ended in NoFit (the rest of the class would too) or a member is waiting already.
func (c *cycle) follow(p Pending) {
	if c.in.Followers == nil || p.Class == "" {
		return
	}
	if c.visits.fetched[p.id()] {
		delete(c.following, p.Class)
	}
	if c.noFit || c.following[p.Class] {
		return
	}
	next, ok := c.in.Followers.Next(p.Class)
	if !ok {
		return
	}
	if c.following == nil {
		c.following = map[string]bool{}
	}
	c.following[p.Class] = true
	c.visits.add(next)
}
