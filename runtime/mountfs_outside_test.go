package runtime

import (
	"path"
	"slices"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestOutsideFS: the tree outside mounts at /data and /srv/a/b has /,
// /srv and /srv/a as read-only directories listing the next component of
// each mount; everything else does not exist, creating directly in one of
// those directories is EACCES and changing them is EACCES.
func TestOutsideFS(t *testing.T) {
	o := newOutsideFS([]string{"/data", "/srv/a/b", "/srv/a/b/c/"})
	list := func(p string) string {
		f, errno := o.OpenFile(p, experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if errno != 0 {
			return errnoName(errno)
		}
		defer f.Close()
		ents, errno := f.Readdir(-1)
		if errno != 0 {
			return errnoName(errno)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name)
		}
		return strings.Join(names, ",")
	}
	for _, tc := range []struct{ path, want string }{
		{"", "data,srv"}, {".", "data,srv"}, {"/", "data,srv"}, {"srv", "a"}, {"srv/a", "b"}, {"srv/../srv/a/", "b"},
		{"etc", errnoName(experimentalsys.ENOENT)}, {"srv/x", errnoName(experimentalsys.ENOENT)},
	} {
		if got := list(tc.path); got != tc.want {
			t.Errorf("list %q = %s, want %s", tc.path, got, tc.want)
		}
	}
	const (
		enoent = experimentalsys.ENOENT
		eacces = experimentalsys.EACCES
		eexist = experimentalsys.EEXIST
		eisdir = experimentalsys.EISDIR
	)
	create := func(p string) experimentalsys.Errno {
		_, errno := o.OpenFile(p, experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644)
		return errno
	}
	open := func(p string, flag experimentalsys.Oflag) experimentalsys.Errno {
		f, errno := o.OpenFile(p, flag, 0)
		if errno == 0 {
			f.Close()
		}
		return errno
	}
	_, statErr := o.Stat("etc/passwd")
	_, statSrv := o.Stat("srv/a")
	_, linkErr := o.Readlink("srv")
	for _, tc := range []struct {
		what      string
		got, want experimentalsys.Errno
	}{
		{"create /x", create("x"), eacces},
		{"create /srv/x", create("srv/x"), eacces},
		{"create /etc/x", create("etc/x"), enoent},
		{"create /srv (exists)", open("srv", experimentalsys.O_CREAT|experimentalsys.O_EXCL|experimentalsys.O_WRONLY), eexist},
		{"open /srv for writing", open("srv", experimentalsys.O_WRONLY), eisdir},
		{"open /etc/passwd", open("etc/passwd", experimentalsys.O_RDONLY), enoent},
		{"stat /etc/passwd", statErr, enoent},
		{"stat /srv/a", statSrv, 0},
		{"mkdir /x", o.Mkdir("x", 0o755), eacces},
		{"mkdir /srv", o.Mkdir("srv", 0o755), eexist},
		{"mkdir /etc/x", o.Mkdir("etc/x", 0o755), enoent},
		{"unlink /etc/passwd", o.Unlink("etc/passwd"), enoent},
		{"rmdir /srv", o.Rmdir("srv"), eacces},
		{"rename /srv", o.Rename("srv", "x"), eacces},
		{"rename /etc", o.Rename("etc", "x"), enoent},
		{"chmod /srv", o.Chmod("srv", 0o777), eacces},
		{"utimens /etc", o.Utimens("etc", 0, 0), enoent},
		{"symlink /x", o.Symlink("/etc", "x"), eacces},
		{"link /etc/passwd", o.Link("etc/passwd", "x"), enoent},
		{"readlink /srv", linkErr, experimentalsys.EINVAL},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.what, errnoName(tc.got), errnoName(tc.want))
		}
	}
}

// FuzzOutsidePath: for any path, outsideFS never panics, answers only
// ENOENT, EACCES, EEXIST, EISDIR or EINVAL on failure, and opens or stats
// only the directories on the way to a mount.
func FuzzOutsidePath(f *testing.F) {
	for _, p := range []string{"", ".", "/", "data", "srv/a", "../srv", "srv/a/b/../..", "etc/passwd", "\x00", "//srv//a/"} {
		f.Add(p, uint8(0))
	}
	mounts := []string{"/data", "/srv/a/b"}
	ways := []string{".", "srv", "srv/a"}
	f.Fuzz(func(t *testing.T, p string, op uint8) {
		o := newOutsideFS(mounts)
		var errno experimentalsys.Errno
		switch op % 8 {
		case 0:
			var fl experimentalsys.File
			if fl, errno = o.OpenFile(p, experimentalsys.O_RDONLY, 0); errno == 0 {
				_, errno = fl.Readdir(-1)
				fl.Close()
			}
		case 1:
			_, errno = o.OpenFile(p, experimentalsys.O_CREAT|experimentalsys.O_RDWR, 0)
		case 2:
			_, errno = o.Stat(p)
		case 3:
			errno = o.Mkdir(p, 0)
		case 4:
			errno = o.Unlink(p)
		case 5:
			errno = o.Rename(p, p)
		case 6:
			_, errno = o.Readlink(p)
		case 7:
			errno = o.Symlink(p, p)
		}
		c := path.Clean("/" + p)[1:]
		if c == "" {
			c = "."
		}
		way := slices.Contains(ways, c)
		switch errno {
		case 0:
			if !way || op%8 != 0 && op%8 != 2 {
				t.Errorf("op %d on %q succeeded", op%8, p)
			}
		case experimentalsys.ENOENT, experimentalsys.EACCES, experimentalsys.EEXIST, experimentalsys.EISDIR, experimentalsys.EINVAL:
		default:
			t.Errorf("op %d on %q: %v", op%8, p, errno)
		}
	})
}
