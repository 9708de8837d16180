module github.com/wasmcp/wasmcp

go 1.26.8

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/sys v0.44.0
)

require golang.org/x/text v0.14.0 // indirect
