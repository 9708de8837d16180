package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/server"
)

// cmdPull fetches and verifies a plugin into the cache and prints its
// digest.
func cmdPull(ctx context.Context, args []string) error {
	fs := newConfigCmd("pull")
	key := fs.String("key", "", "cosign public key the plugin must be signed with (default: the [plugins.verify] of the configured plugin with this url)")
	cfg, pos, err := fs.load(args, func(pos []string) error {
		if len(pos) != 1 {
			return usagef("pull: want one REF (oci://HOST/REPO:TAG, oci://HOST/REPO@sha256:HEX or https://…)")
		}
		return nil
	})
	if err != nil {
		return err
	}
	p, err := server.Pull(ctx, cfg, pos[0], *key, os.Stderr)
	if err != nil {
		return err
	}
	verified := "not verified (no [plugins.verify] and no --key)"
	if p.Verified {
		verified = "signature verified"
	}
	fmt.Fprintf(os.Stderr, "wasmcp: %s: wasm sha256 %s, %s\n", p.Ref, p.SHA256, verified)
	fmt.Println(p.Digest)
	return nil
}

// cmdPush uploads a plugin file in the CNCF Wasm OCI layout.
func cmdPush(ctx context.Context, args []string) error {
	cfg, pos, err := newConfigCmd("push").load(args, func(pos []string) error {
		if len(pos) != 2 || !strings.HasPrefix(pos[1], "oci://") {
			return usagef("push: want FILE.wasm oci://HOST/REPO:TAG")
		}
		return nil
	})
	if err != nil {
		return err
	}
	d, err := server.Push(ctx, cfg, pos[0], pos[1])
	if err != nil {
		return err
	}
	fmt.Println(d)
	return nil
}

// cmdLock writes wasmcp.lock beside the configuration: the url plugins'
// digests and grants, and the definitions every plugin serves. When the
// lock in place already records definitions and they changed, it prints
// the difference and writes nothing unless --update approves it.
func cmdLock(ctx context.Context, args []string) error {
	fs := newConfigCmd("lock")
	update := fs.Bool("update", false, "approve definitions that differ from those wasmcp.lock records (the difference is printed first)")
	cfg, _, err := fs.load(args, nil)
	if err != nil {
		return err
	}
	old, err := config.LoadLock(cfg)
	if err != nil {
		return err
	}
	lock, changes, err := server.Lock(ctx, cfg, os.Stderr)
	if err != nil {
		return err
	}
	for _, c := range changes {
		fmt.Fprintln(os.Stderr, "wasmcp: lock:", c)
	}
	diff := server.PinDiff(old, lock)
	pinned := old != nil && len(old.Pins) > 0
	if len(diff) > 0 && pinned {
		fmt.Fprintf(os.Stderr, "wasmcp: lock: definitions differ from %s:\n", config.LockPath(cfg))
		server.WritePinDiff(os.Stderr, diff)
		if !*update {
			return fmt.Errorf("lock: %d definitions differ from those %s approved; nothing written: review the difference above, then run `wasmcp lock --update` to approve it", len(diff), config.LockFile)
		}
	}
	path, err := server.WriteLock(cfg, lock)
	if err != nil {
		return err
	}
	items := 0
	for _, p := range lock.Pins {
		items += len(p.Items)
	}
	fmt.Fprintf(os.Stderr, "wasmcp: wrote %s (%d url plugins; %d definitions of %d plugins pinned)\n", path, len(lock.Plugins), items, len(lock.Pins))
	return nil
}
