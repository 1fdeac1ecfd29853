package plan

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Ledger records which device IDs of which node are bound to which workload. Committers
// use it for the final re-check: Bind refuses a device that is already bound, so a
// device is never given to two pods even when two plans raced.
type Ledger struct {
	owner map[string]map[string]api.WorkloadID // node -> device ID -> workload
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{owner: map[string]map[string]api.WorkloadID{}} }

// Check reports the first device of bs that is already bound (nil if all are free).
func (l *Ledger) Check(bs []Binding) error {
	seen := map[string]bool{}
	for _, b := range bs {
		for _, d := range b.Devices {
			if sharedDevice(d) {
				continue // fractions of a GPU are not exclusive (see sharedDevice)
			}
			key := b.Node + "/" + d
			if seen[key] {
				return fmt.Errorf("device %s on node %s requested twice by workload %s", d, b.Node, b.Workload)
			}
			seen[key] = true
			if w, ok := l.owner[b.Node][d]; ok {
				return fmt.Errorf("device %s on node %s is already bound to workload %s", d, b.Node, w)
			}
		}
	}
	return nil
}

// Bind records all devices of bs, or none when any is taken.
func (l *Ledger) Bind(bs []Binding) error {
	if err := l.Check(bs); err != nil {
		return err
	}
	for _, b := range bs {
		m := l.owner[b.Node]
		if m == nil {
			m = map[string]api.WorkloadID{}
			l.owner[b.Node] = m
		}
		for _, d := range b.Devices {
			if !sharedDevice(d) {
				m[d] = b.Workload
			}
		}
	}
	return nil
}

// ReleaseWorkload frees every device bound to the workload.
func (l *Ledger) ReleaseWorkload(id api.WorkloadID) {
	for node, m := range l.owner {
		for d, w := range m {
			if w == id {
				delete(m, d)
			}
		}
		if len(m) == 0 {
			delete(l.owner, node)
		}
	}
}

// ReleaseNode frees every device of a node (the node went away).
func (l *Ledger) ReleaseNode(node string) { delete(l.owner, node) }

// Bound returns the bound device IDs of a node, sorted.
func (l *Ledger) Bound(node string) []string {
	out := make([]string, 0, len(l.owner[node]))
	for d := range l.owner[node] {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}
