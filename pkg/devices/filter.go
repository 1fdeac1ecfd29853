package devices

// Filter narrows a request to some of a node's devices. Fit lists the free devices a
// filtered request may take, in its own order of preference (the devices it would pick
// without a filter come first), and the filter chooses among them: pkg/dra's compiled
// ResourceClaims are filters (CEL selectors, matchAttribute constraints, several
// requests with their own selectors in one pod).
//
// A filtered request takes only whole GPUs (Units) and whole MIG instances of the mixed
// strategy (MIG), never replicas, shares or ".shared" renames: a DRA driver publishes
// GPUs and MIG devices, not the device plugin's replicas.
//
// Implementations must be deterministic and safe to share between goroutines, as
// Request values are copied and shared; Choose must not keep cands.
type Filter interface {
	// Key identifies what the filter chooses: two filters with one key choose alike, so
	// caches of Fit's answers (placement's fit cache) key on it.
	Key() string
	// Allows reports whether the request may take the candidate at all. Fit orders
	// whole GPUs by topology among the allowed ones and lists the others last, so its
	// preference is among the devices the filter may take (Choose still sees every
	// candidate, to say why the others do not do).
	Allows(c Candidate) bool
	// Choose picks want devices among cands and returns their positions in cands, or
	// the reason it cannot. Fit checks the answer: want distinct positions, and for a
	// MIG request each profile's count.
	Choose(cands []Candidate, want int) ([]int, string)
}

// SizedFilter is a Filter whose request takes a number of devices that depends on the
// node: DRA's allocationMode All takes every device of the node its selectors match,
// and fails where any of them is held. The request's own count (Units, or each MIG
// profile's Count) is then the least it takes on any node, so that capacity checks
// made by count stay optimistic and Fit decides.
//
// Fit gives it the held devices of the request's kind beside the free candidates:
// only the filter can tell which of them it would have had to take. Dynamic MIG GPUs'
// placements are not sized (a node with a dynamic GPU of a requested MIG profile
// refuses a sized MIG request).
type SizedFilter interface {
	Filter
	// ChooseSized is Choose for a request sized by the node: held are the node's
	// devices of the request's kind that other pods hold, and the answer is at least
	// want positions in cands.
	ChooseSized(cands, held []Candidate, want int) ([]int, string)
}

// Candidate is one free device a filtered request may take: a whole GPU (Instance nil)
// or one MIG instance of it. GPU and Instance are the node's own values: read-only.
type Candidate struct {
	GPU      *GPU
	Instance *Instance
	Device   Device
}

// FilterKey is r's filter key, "" without a filter (for caches keyed by request shape).
func (r Request) FilterKey() string {
	if r.Filter == nil {
		return ""
	}
	return r.Filter.Key()
}
