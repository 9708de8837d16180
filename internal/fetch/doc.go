// Package fetch brings plugins from elsewhere into a local,
// content-addressed cache: OCI registries (oci://HOST[:PORT]/REPO:TAG or
// @sha256:HEX) and HTTPS URLs. It parses references, resolves tags to
// manifest digests, downloads manifests and the wasm they name (the CNCF
// Wasm OCI artifact, and hyper-mcp's two layouts) within size limits and
// timeouts, refuses bytes whose digest does not match, collects the cosign
// signatures stored beside an image (the sha256-<digest>.sig tag and OCI
// 1.1 referrers) for package verify to check, and pushes plugins in the
// CNCF layout.
//
// Registries on loopback are spoken to over plain HTTP, every other one
// over HTTPS; a plain-HTTP request to a non-loopback host, or a redirect
// to a private or loopback address the reference did not name, is
// refused. Credentials come from the Docker configuration and never
// appear in errors. It owns github.com/google/go-containerregistry.
package fetch
