package imagebuild

import (
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// refAnnotation names the image in an OCI layout's index.json (what skopeo's
// oci:<dir>:<tag> and crane read).
const refAnnotation = "org.opencontainers.image.ref.name"

// WriteLayout replaces dir with an OCI image layout whose index.json lists one entry
// named ref: the image itself for one platform, an image index of all of them for
// several. It returns that entry's digest.
func WriteLayout(dir, ref string, imgs []v1.Image) (v1.Hash, error) {
	if _, err := name.ParseReference(ref); err != nil {
		return v1.Hash{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	top, err := topEntry(imgs)
	if err != nil {
		return v1.Hash{}, err
	}
	desc, err := partial.Descriptor(top)
	if err != nil {
		return v1.Hash{}, err
	}
	desc.Annotations = map[string]string{refAnnotation: ref}
	// A stale index.json would keep earlier builds listed: start from nothing.
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: top, Descriptor: *desc})
	if _, err := layout.Write(dir, idx); err != nil {
		return v1.Hash{}, fmt.Errorf("writing OCI layout %s: %w", dir, err)
	}
	return desc.Digest, nil
}

// topEntry is the one image, or an index of the images with their platforms.
func topEntry(imgs []v1.Image) (mutate.Appendable, error) {
	if len(imgs) == 1 {
		return imgs[0], nil
	}
	var adds []mutate.IndexAddendum
	for _, img := range imgs {
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: cf.Platform()}})
	}
	return mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...), nil
}

// WriteDockerTar writes img as a tarball `docker load` reads, tagged ref.
func WriteDockerTar(file, ref string, img v1.Image) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image reference %q: %w", ref, err)
	}
	if err := tarball.WriteToFile(file, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", file, err)
	}
	return nil
}
