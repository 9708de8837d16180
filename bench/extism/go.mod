// The Extism comparison benchmark: its own module, so that extism/go-sdk
// is never a dependency of the server or of the main bench module.
module github.com/wasmcp/wasmcp/bench/extism

go 1.26.8

replace github.com/wasmcp/wasmcp => ../..

require (
	github.com/extism/go-sdk v1.7.1
	github.com/wasmcp/wasmcp v0.0.0-00010101000000-000000000000
)

require (
	github.com/dylibso/observe-sdk/go v0.0.0-20240819160327-2d926c5d788a // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20240805132620-81f5be970eca // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	github.com/tetratelabs/wabin v0.0.0-20230304001439-f6f874872834 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	go.opentelemetry.io/proto/otlp v1.11.1 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
