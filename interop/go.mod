module github.com/wasmcp/wasmcp/interop

go 1.26.8

replace github.com/wasmcp/wasmcp => ../

require github.com/modelcontextprotocol/go-sdk v1.8.0 // indirect
