// Command gofs is a Go plugin that reports the error Go's os package
// returns for file system operations on paths it names.
//
//	fs {op, path}   op is read, write, append, mkdir, remove, rename (to
//	                path+".2"), symlink (path -> "x"), truncate, chmod or
//	                list; answers "ok" (list: "ok:" and the names) or the
//	                error and its errno
//
// Build: testdata/hostile/build.sh
package main

import (
	"errors"
	"os"
	"strings"
	"syscall"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

var plugin = wasmcp.New(wasmcp.Info{Name: "gofs", Version: "1.0.0"})

type fsIn struct {
	Op   string `json:"op"`
	Path string `json:"path"`
}

func init() {
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "fs", Description: "Runs one file system operation and reports its error."},
		func(c *wasmcp.Context, in fsIn) (*wasmcp.Result, error) {
			var err error
			var names []string
			switch in.Op {
			case "read":
				_, err = os.ReadFile(in.Path)
			case "write":
				err = os.WriteFile(in.Path, []byte("x"), 0o644)
			case "append":
				var f *os.File
				if f, err = os.OpenFile(in.Path, os.O_WRONLY|os.O_APPEND, 0); err == nil {
					_, err = f.Write([]byte("x"))
					f.Close()
				}
			case "rename":
				err = os.Rename(in.Path, in.Path+".2")
			case "symlink":
				err = os.Symlink("x", in.Path)
			case "truncate":
				err = os.Truncate(in.Path, 0)
			case "chmod":
				err = os.Chmod(in.Path, 0o600)
			case "mkdir":
				err = os.Mkdir(in.Path, 0o755)
			case "remove":
				err = os.Remove(in.Path)
			case "list":
				var ents []os.DirEntry
				ents, err = os.ReadDir(in.Path)
				for _, e := range ents {
					names = append(names, e.Name())
				}
			default:
				return wasmcp.ErrorResult("unknown op " + in.Op), nil
			}
			if err == nil {
				if in.Op == "list" {
					return wasmcp.TextResult("ok:" + strings.Join(names, ",")), nil
				}
				return wasmcp.TextResult("ok"), nil
			}
			var errno syscall.Errno
			errors.As(err, &errno)
			return wasmcp.TextResult(err.Error() + " (errno " + errnoName(errno) + ")"), nil
		})
	wasmcp.Serve(plugin)
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.EROFS:
		return "EROFS"
	case syscall.ENOENT:
		return "ENOENT"
	case syscall.EPERM:
		return "EPERM"
	case syscall.EACCES:
		return "EACCES"
	case syscall.EBADF:
		return "EBADF"
	case syscall.ENOSYS:
		return "ENOSYS"
	case syscall.ENOTCAPABLE:
		return "ENOTCAPABLE"
	case 0:
		return "none"
	}
	return e.Error()
}

func main() {}
