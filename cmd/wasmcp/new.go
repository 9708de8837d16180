package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wasmcp/wasmcp/internal/scaffold"
)

// cmdNew scaffolds a plugin project (internal/scaffold).
func cmdNew(args []string) error {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	lang := fs.String("lang", "", "language: "+strings.Join(scaffold.Languages(), ", "))
	dir := fs.String("dir", "", "project directory (default ./NAME)")
	sdk := fs.String("sdk", "", "wasmcp checkout whose SDKs the project uses (default: found from the current directory or the executable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("new: want --lang LANG NAME")
	}
	if *lang == "" {
		return usagef("new: --lang is required (%s)", strings.Join(scaffold.Languages(), ", "))
	}
	name := pos[0]
	if *dir == "" {
		*dir = name
	}
	root := *sdk
	if root == "" {
		root = findSDK()
		if root == "" {
			return usagef("new: cannot find a wasmcp checkout for the SDKs; run from one or pass --sdk DIR")
		}
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return usageError{err}
	}
	if err := scaffold.Write(*dir, *lang, name, scaffold.Options{SDKRoot: root}); err != nil {
		return usageError{fmt.Errorf("new: %w", err)}
	}
	fmt.Fprintf(os.Stderr, "wasmcp: created %s (%s); build it with: cd %s && ./build.sh\n", *dir, *lang, *dir)
	return nil
}

func findSDK() string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := scaffold.FindSDKRoot(wd); err == nil {
			return r
		}
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := scaffold.FindSDKRoot(filepath.Dir(exe)); err == nil {
			return r
		}
	}
	return ""
}
