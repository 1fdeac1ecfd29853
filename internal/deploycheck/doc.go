// Package deploycheck tests what ships to clusters: the Helm chart (charts/gantry),
// rendered with the subset of Helm's template functions it uses, and the kustomize tree
// (config/), every resource of every kustomization found and decoded strictly into its
// Kubernetes type. Both must give the same RBAC rules and the image names `make image`
// builds. It has only tests.
package deploycheck
