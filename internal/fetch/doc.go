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
// over HTTPS; a plain-HTTP request to a non-loopback host is refused.
// Every connection is checked as it is dialled, whatever asked for it
// (the registry, its token realm, a redirect, a blob store): a source
// whose host is public reaches public addresses only, one on a private
// or link-local address also addresses of that kind, and one on
// loopback (by address, or as localhost) any. The cache is not trusted:
// a cached blob is hashed again against its digest on every use, and a
// pull reads at most MaxPull bytes and removes what it cached when it
// fails. Credentials come from the Docker configuration and never
// appear in errors. It owns github.com/google/go-containerregistry.
package fetch
