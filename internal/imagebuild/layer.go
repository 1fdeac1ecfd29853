package imagebuild

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// entry is one file or directory of a layer.
type entry struct {
	path   string      // absolute, slash-separated
	mode   os.FileMode // permission bits, plus fs.ModeDir and fs.ModeSticky where they apply
	uid    int
	data   []byte // contents when source is ""
	source string // file on the build machine to copy
}

func dir(p string, mode os.FileMode, uid int) entry {
	return entry{path: p, mode: os.ModeDir | mode, uid: uid}
}

// newLayer writes the entries as a tar stream in path order, each owned by its uid (and
// the group of the same number) and stamped with created, so equal inputs give equal
// bytes; every parent directory missing from entries is added (root, 0755). The layer is
// gzip-compressed with an OCI media type.
func newLayer(entries []entry, created time.Time) (v1.Layer, error) {
	entries = withParents(entries)
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := writeEntry(tw, e, created); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

func writeEntry(tw *tar.Writer, e entry, created time.Time) error {
	data := e.data
	if e.source != "" {
		var err error
		if data, err = os.ReadFile(e.source); err != nil {
			return fmt.Errorf("layer file %s: %w", e.path, err)
		}
	}
	h := &tar.Header{
		Name: e.path[1:], Mode: int64(e.mode.Perm()), Uid: e.uid, Gid: e.uid,
		ModTime: created, Typeflag: tar.TypeReg, Size: int64(len(data)), Format: tar.FormatPAX,
	}
	if e.mode&os.ModeSticky != 0 {
		h.Mode |= 01000
	}
	if e.mode.IsDir() {
		h.Name, h.Typeflag, h.Size = e.path[1:]+"/", tar.TypeDir, 0
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("layer file %s: %w", e.path, err)
	}
	_, err := tw.Write(data)
	return err
}

// withParents adds the directories above each entry that entries do not list.
func withParents(entries []entry) []entry {
	have := map[string]bool{}
	for _, e := range entries {
		have[e.path] = true
	}
	out := append([]entry(nil), entries...)
	for _, e := range entries {
		for d := path.Dir(e.path); d != "/" && !have[d]; d = path.Dir(d) {
			have[d] = true
			out = append(out, dir(d, 0o755, 0))
		}
	}
	return out
}
