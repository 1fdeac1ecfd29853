package imagebuild_test

import (
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/gantry-sched/gantry/internal/imagebuild"
)

// TestTwoPlatformsMakeAnIndex: with an arm64 binary next to the amd64 one, the layout's
// entry is an image index with one image per platform, each holding its own binary.
func TestTwoPlatformsMakeAnIndex(t *testing.T) {
	s := controllerSpec(staticBinary(t, "amd64"))
	s.Binaries = append(s.Binaries, imagebuild.Binary{
		Platform: v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}, Path: staticBinary(t, "arm64"),
	})
	digest, layout := writeAndRead(t, s, "ghcr.io/gantry-sched/gantry:multi")
	m, err := layout.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != digest || m.Manifests[0].MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("index.json %+v, want one image index %s", m.Manifests, digest)
	}
	idx, err := layout.ImageIndex(digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("%d images, want 2", len(im.Manifests))
	}
	for i, want := range []string{"amd64", "arm64"} {
		d := im.Manifests[i]
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if d.Platform == nil || d.Platform.Architecture != want || cf.Architecture != want {
			t.Errorf("image %d: descriptor platform %+v, config %s; want %s", i, d.Platform, cf.Architecture, want)
		}
		if _, ok := files(t, img)["/gantry"]; !ok {
			t.Errorf("%s image has no /gantry", want)
		}
	}
}
