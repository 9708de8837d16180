package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

// State that every pooled instance must see lives in kv: each instance has
// its own memory.
const (
	transientTool   = "test_transient_tool"
	transientPrompt = "test_transient_prompt"
	watchedURI      = "test://watched-resource"
	watchedKey      = "watched-revision"
)

// toggleKey is the kv key that is set while the transient item of kind is
// listed.
func toggleKey(kind wasmcp.ListKind) string { return "transient:" + string(kind) }

// listed is the plugin's list filter: the transient tool and prompt are
// listed while their kv key is set. Without kv they stay hidden.
func listed(c *wasmcp.Context, kind wasmcp.ListKind, name string) bool {
	if name != transientTool && name != transientPrompt {
		return true
	}
	_, ok, err := c.KVGet(toggleKey(kind))
	return err == nil && ok
}

// trigger returns a tool that adds or removes the transient item of kind
// and tells the host, which describes the plugin again and notifies
// clients of the changed list.
func trigger(kind wasmcp.ListKind) wasmcp.ToolHandler {
	return func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		key := toggleKey(kind)
		_, on, err := c.KVGet(key)
		if err == nil {
			if on {
				err = c.KVDelete(key)
			} else {
				err = c.KVSet(key, "1", 0)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("cannot change the %s list (the plugin needs the kv grant): %w", kind, err)
		}
		if err := c.NotifyListChanged(kind); err != nil {
			return nil, err
		}
		state := "added"
		if on {
			state = "removed"
		}
		return wasmcp.TextResult(fmt.Sprintf("The %s list changed: the transient item was %s.", kind, state)), nil
	}
}

// revision returns the watched resource's revision (0 until updated).
func revision(c *wasmcp.Context) (int, error) {
	v, ok, err := c.KVGet(watchedKey)
	if err != nil || !ok {
		return 0, err
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("watched resource revision %q: %w", v, err)
	}
	return n, nil
}

// updateWatched changes the watched resource and notifies its subscribers.
func updateWatched(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	n, err := revision(c)
	if err != nil {
		return nil, err
	}
	n++
	if err := c.KVSet(watchedKey, strconv.Itoa(n), 0); err != nil {
		return nil, fmt.Errorf("cannot update the watched resource (the plugin needs the kv grant): %w", err)
	}
	if err := c.NotifyResourceUpdated(watchedURI); err != nil {
		return nil, err
	}
	return wasmcp.TextResult(fmt.Sprintf("%s is now at revision %d.", watchedURI, n)), nil
}
