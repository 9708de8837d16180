package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A mount must not be a way out. wazero's own directory mounts resolve
// every guest path by name with the host's open(2), which follows symlinks
// wherever they point, so a symlink inside a granted directory reached any
// file the server could read. Checking a path through an os.Root first and
// letting wazero reopen it by name was not enough either: between the
// check and the open, a directory on the path can be swapped for a
// symlink out (by the host, another plugin, or a plugin renaming a symlink
// it found into place), and a mount directory replaced on the host after
// load was followed to the replacement.
//
// So a mount is a rootFS (mountfs.go): wazero's file-system interface
// implemented on one os.Root opened when the plugin loads. Every guest
// path operation resolves through that root handle at the moment of use,
// symlinks and ".." included, and fails with EPERM if it would leave the
// directory; nothing is reopened by host path. The mount stays the
// directory granted at load, wherever it is moved to.

// mountFS opens mt's directory and returns the file system the guest sees
// for it.
func mountFS(mt Mount) (experimentalsys.FS, error) {
	root, err := os.OpenRoot(mt.HostPath)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mt.GuestPath, err)
	}
	// os.Root's escape error is unexported: take it from an escape.
	_, err = root.Stat("..")
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		_ = root.Close()
		return nil, fmt.Errorf("mount %s: cannot tell escapes from %s: %v", mt.GuestPath, mt.HostPath, err)
	}
	return &rootFS{root: root, readOnly: mt.ReadOnly, escape: pe.Err}, nil
}
