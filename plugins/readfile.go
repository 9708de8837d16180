package plugins

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/wasmcp/wasmcp/runtime"
)

// ErrNotRegular is returned for a plugin path that is not a regular file
// (a device such as /dev/zero, a FIFO, a socket or a directory), before
// anything is read from it.
var ErrNotRegular = errors.New("not a regular file")

// ErrModuleTooLarge is returned for a plugin file over the module-size
// limit ([limits] max_module_size), before it is read.
var ErrModuleTooLarge = errors.New("over the module-size limit")

// readModule reads the plugin file at path, looking before it reads: the
// file (a symbolic link is followed; what it ends at must be a regular
// file) must be regular and at most limit bytes, it is opened without
// blocking (a FIFO swapped in after the check cannot hold the load up),
// checked again through the opened descriptor, and read through a reader
// that stops at limit+1 bytes, so neither a device, nor a sparse file of
// 64 GiB, nor a file that grows while it is read costs more than limit
// bytes of memory. limit 0 means the runtime's default.
func readModule(path string, limit uint64) ([]byte, error) {
	b, _, err := readModuleFile(path, limit)
	return b, err
}

// readModuleFile is readModule, which also returns what the opened file
// was when it was read.
func readModuleFile(path string, limit uint64) ([]byte, fs.FileInfo, error) {
	if limit == 0 {
		limit = runtime.DefaultModuleLimits().ModuleSize
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := lookRegular(fi, limit); err != nil {
		return nil, nil, err
	}
	f, err := openNonblock(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if err := lookRegular(fi, limit); err != nil {
		return nil, nil, err
	}
	b := make([]byte, 0, fi.Size()+1)
	b, err = readAllInto(b, io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, nil, err
	}
	if uint64(len(b)) > limit {
		return nil, nil, fmt.Errorf("%w: the file grew past %d bytes while read ([limits] max_module_size)", ErrModuleTooLarge, limit)
	}
	return b, fi, nil
}

// lookRegular refuses fi unless it is a regular file of at most limit
// bytes.
func lookRegular(fi fs.FileInfo, limit uint64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, fileType(fi.Mode()))
	}
	if fi.Size() < 0 || uint64(fi.Size()) > limit {
		return fmt.Errorf("%w: %d bytes, limit %d ([limits] max_module_size)", ErrModuleTooLarge, fi.Size(), limit)
	}
	return nil
}

// fileType names the kind of a file that is not regular.
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "mode " + m.String()
}

// readAllInto is io.ReadAll into b's spare capacity.
func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return b, nil
			}
			return b, err
		}
	}
}
