package placement

// FailureCode is a stable, machine-readable code for why a workload could not be placed;
// the engine reports it as a rejection reason. Codes never change meaning.
// (Reason, by contrast, is why one pod does not fit one node.)
type FailureCode string

const (
	// NoNodeFits: no node can take the gang's first unplaced pod.
	NoNodeFits FailureCode = "NoNodeFits"
	// GangDoesNotFit: some nodes fit one pod, but not the whole gang at once.
	GangDoesNotFit FailureCode = "GangDoesNotFit"
	// TopologyUnsatisfied: no topology domain has room for the gang.
	TopologyUnsatisfied FailureCode = "TopologyUnsatisfied"
	// InvalidWorkload: the workload itself cannot be placed (e.g. an unparsable GPU
	// request).
	InvalidWorkload FailureCode = "InvalidWorkload"
	// VictimNotBound: a preemption what-if names a victim whose pod is not bound in the
	// overlay, so freeing it cannot be tried.
	VictimNotBound FailureCode = "VictimNotBound"
)

// Code is the diagnosis's failure code: an invalid workload first, then a topology
// failure, then a gang that fits pod by pod but not as a whole; otherwise no node fits.
// A nil diagnosis (the workload fits) has no code.
func (d *Diagnosis) Code() FailureCode {
	switch {
	case d == nil:
		return ""
	case d.Err != "":
		return InvalidWorkload
	case d.Topology != "":
		return TopologyUnsatisfied
	case d.FitNodes > 0:
		return GangDoesNotFit
	}
	return NoNodeFits
}
