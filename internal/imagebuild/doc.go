// Package imagebuild builds Gantry's container images without a container daemon: an
// OCI image from one Go binary per platform, assembled with go-containerregistry and
// written as an OCI image layout (and, for one platform, a tarball `docker load` reads).
//
// A statically linked binary goes on an empty base, like distroless/static. A dynamically
// linked one (the node agent, which needs cgo for NVML) also gets the shared libraries it
// needs, found the way the dynamic loader inside the image will find them: the ELF's
// DT_NEEDED entries, resolved through its run path and the loader's default directories
// on the build machine, transitively, plus the loader named by PT_INTERP. Libraries the
// binary only dlopens (glibc's libm, libdl, libpthread, librt for the driver's
// libnvidia-ml.so.1, which NVIDIA's container toolkit mounts from the host) are named
// explicitly and resolved the same way.
//
// Builds are reproducible: every timestamp is the one given (SOURCE_DATE_EPOCH in
// hack/image), entries are sorted and owned by root, so the same inputs give the same
// digest.
package imagebuild
