// The Go Extism test plugins: their own module, so that the server never
// depends on github.com/extism/go-pdk.
module wasmcp.test/extism

go 1.24

require github.com/extism/go-pdk v1.1.3
