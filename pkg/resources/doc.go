// Package resources owns Gantry's typed integer quantities: resource names, amounts in
// each resource's canonical unit (milli-CPU, bytes, milli-GPU, counts), resource vectors
// with saturating arithmetic, and parsing of Kubernetes quantity strings.
//
// No floats anywhere: quota, fair share and GPU fractions are exact integers, so two
// runs over the same inputs always produce the same decisions.
package resources
