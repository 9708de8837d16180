// Package verify checks cosign signatures of OCI plugins against an
// operator's policy: a cosign public key, or a keyless identity (exact or
// regular expression) and OIDC issuer under a pinned Sigstore trusted
// root, offline. It takes the signature material package fetch found
// beside an image — Sigstore bundles from OCI 1.1 referrers (cosign v3)
// and simple-signing payloads from the sha256-<digest>.sig tag (cosign
// v2) — and accepts the image only when one of them is valid for the very
// manifest digest that is then loaded. It owns
// github.com/sigstore/sigstore-go and github.com/sigstore/sigstore.
package verify
