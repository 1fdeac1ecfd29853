package placement

import "testing"

// TestDiagnosisCode: the code follows the diagnosis's most specific fact, in the order
// the engine has always reported them (invalid, topology, gang, no node).
func TestDiagnosisCode(t *testing.T) {
	cases := []struct {
		name string
		d    *Diagnosis
		want FailureCode
	}{
		{"fits", nil, ""},
		{"no node", &Diagnosis{TotalNodes: 4}, NoNodeFits},
		{"gang", &Diagnosis{TotalNodes: 4, FitNodes: 2, GangSize: 8}, GangDoesNotFit},
		{"topology beats gang", &Diagnosis{FitNodes: 2, Topology: "no rack domain has room for 4 pods"}, TopologyUnsatisfied},
		{"invalid beats all", &Diagnosis{FitNodes: 2, Topology: "x", Err: "bad GPU request"}, InvalidWorkload},
	}
	for _, tc := range cases {
		if got := tc.d.Code(); got != tc.want {
			t.Errorf("%s: Code() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
