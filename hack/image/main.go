// Command image builds one of Gantry's container images from prebuilt binaries, without
// a container daemon, into an OCI image layout (`make image` runs it for the controller
// and the node agent):
//
//	go run ./hack/image -ref ghcr.io/gantry-sched/gantry:v0.1.0 -out bin/images/gantry \
//	    -binary linux/amd64=bin/linux_amd64/gantry -entrypoint '/gantry controller' \
//	    -user 65532:65532 -static -version v0.1.0 -revision $(git rev-parse HEAD)
//
// Timestamps come from SOURCE_DATE_EPOCH (seconds; 0 when unset), so a rebuild of the
// same binaries gives the same digest. See internal/imagebuild.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gantry-sched/gantry/internal/imagebuild"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// options are the command line, read once.
type options struct {
	ref, out, dockerTar       string
	entrypoint, user, dlopen  string
	source, version, revision string
	static                    bool
	binaries                  binaryFlags
}

func run(args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.ref, "ref", "", "image reference, e.g. ghcr.io/gantry-sched/gantry:v0.1.0")
	fs.StringVar(&o.out, "out", "", "OCI layout directory to (re)write")
	fs.StringVar(&o.dockerTar, "docker-tar", "", "also write a `docker load` tarball here (one platform only)")
	fs.Var(&o.binaries, "binary", "os/arch=path of a binary (repeatable, one per platform)")
	fs.StringVar(&o.entrypoint, "entrypoint", "/gantry", "entrypoint, space separated")
	fs.StringVar(&o.user, "user", "", "uid:gid to run as; empty: root")
	fs.BoolVar(&o.static, "static", false, "refuse a dynamically linked binary")
	fs.StringVar(&o.dlopen, "dlopen", "", "comma-separated libraries the binary dlopens, copied with their needs")
	fs.StringVar(&o.source, "source", "https://github.com/gantry-sched/gantry", "org.opencontainers.image.source")
	fs.StringVar(&o.version, "version", "", "org.opencontainers.image.version")
	fs.StringVar(&o.revision, "revision", "", "org.opencontainers.image.revision")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.ref == "" || o.out == "" {
		return fmt.Errorf("-ref and -out are required")
	}
	created, err := sourceDateEpoch(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	return build(o, created, stdout)
}

func build(o options, created time.Time, stdout io.Writer) error {
	imgs, err := imagebuild.Build(imagebuild.Spec{
		Binaries: o.binaries, Entrypoint: strings.Fields(o.entrypoint), User: o.user,
		Static: o.static, Dlopened: splitList(o.dlopen), Labels: o.labels(), Created: created,
	})
	if err != nil {
		return err
	}
	digest, err := imagebuild.WriteLayout(o.out, o.ref, imgs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s@%s\n", o.out, o.ref, digest)
	if o.dockerTar == "" {
		return nil
	}
	if len(imgs) != 1 {
		return fmt.Errorf("-docker-tar %s: takes one platform, %d given", o.dockerTar, len(imgs))
	}
	return imagebuild.WriteDockerTar(o.dockerTar, o.ref, imgs[0])
}

func (o options) labels() map[string]string {
	l := map[string]string{"org.opencontainers.image.source": o.source}
	if o.version != "" {
		l["org.opencontainers.image.version"] = o.version
	}
	if o.revision != "" {
		l["org.opencontainers.image.revision"] = o.revision
	}
	return l
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH (reproducible-builds.org): Unix seconds.
func sourceDateEpoch(v string) (time.Time, error) {
	if v == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	s, err := strconv.ParseInt(v, 10, 64)
	if err != nil || s < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want non-negative Unix seconds", v)
	}
	return time.Unix(s, 0).UTC(), nil
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// binaryFlags collects -binary os/arch=path.
type binaryFlags []imagebuild.Binary

func (b *binaryFlags) String() string { return fmt.Sprint(*b) }

func (b *binaryFlags) Set(v string) error {
	platform, file, ok := strings.Cut(v, "=")
	osName, arch, ok2 := strings.Cut(platform, "/")
	if !ok || !ok2 || file == "" {
		return fmt.Errorf("%q: want os/arch=path", v)
	}
	p := v1.Platform{OS: osName, Architecture: arch}
	if arch == "arm64" {
		p.Variant = "v8"
	}
	*b = append(*b, imagebuild.Binary{Platform: p, Path: file})
	return nil
}
