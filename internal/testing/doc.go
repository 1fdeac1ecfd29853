// Package testing holds fluent builders shared by the tests of every pipeline package
// (nodes, workloads, pools), e.g. MakeNode("n1").GPUs("H100", 8).Obj(). Builders panic
// on bad literals: they are for tests only.
package testing
