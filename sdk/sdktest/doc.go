// Package sdktest tests the C, Rust and AssemblyScript guest SDKs and their
// example plugins end to end: it loads the committed .wasm files through
// package runtime, as the server does, and calls them with real requests
// and a fake runtime.Host.
//
// testdata/{c,rust,as} hold one fixture plugin per SDK, built by
// scripts/build-sdk-examples.sh. The three fixtures expose the same tools
// (echo, config, kv, http, notify, confirm, big, rpc_error), resources,
// prompt and completion, so one table of expectations checks every SDK.
//
// The package has no non-test code; this file only documents it.
package sdktest
