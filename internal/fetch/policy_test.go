package fetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tokenServer is an HTTPS token endpoint on loopback, with a certificate
// for localhost, 127.0.0.1 and ::1 (in the pool returned), counting the
// connections made to it.
func tokenServer(t *testing.T) (*httptest.Server, *x509.CertPool, *atomic.Int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big1, Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"token": "good"})
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, pool, &conns
}

var big1 = new(big.Int).SetInt64(1)

// bearer wraps a registry so that it asks for a token from realm and
// accepts only "Bearer good".
func bearer(realm *string) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer good" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="`+*realm+`",service="registry"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// asPublic makes f count the loopback registry host (host:port) as a
// public address, as a registry on the internet would be.
func asPublic(t *testing.T, f *Fetcher, host string) {
	t.Helper()
	ap, err := netip.ParseAddrPort(host)
	if err != nil {
		t.Fatal(err)
	}
	f.public = map[netip.AddrPort]bool{ap: true}
}

// TestAddressPolicy: a registry that is not on loopback (here one the
// fetcher counts as public) cannot make wasmcp connect to a loopback or
// private address: not through its token realm, nor a redirect of a
// manifest or blob, for any operation (Fetch, Resolve, Signatures,
// Push). A registry on loopback may use a token service on loopback.
func TestAddressPolicy(t *testing.T) {
	ctx := context.Background()
	tok, pool, conns := tokenServer(t)
	tokHost := strings.TrimPrefix(tok.URL, "https://")
	_, tokPort, _ := net.SplitHostPort(tokHost)
	// go-containerregistry refuses realms that are private IP literals
	// itself, not names.
	realm := "https://localhost:" + tokPort + "/token"
	host := startRegistry(t, bearer(&realm))

	// A loopback registry (the operator's own) may.
	f := newFetcher(t, Options{RootCAs: pool})
	d, err := f.Push(ctx, mustRef(t, "oci://"+host+"/p:1"), testWasm, nil)
	if err != nil {
		t.Fatalf("loopback registry with a loopback token realm: %v", err)
	}
	if conns.Load() == 0 {
		t.Fatal("the token service was not asked")
	}
	ref := mustRef(t, "oci://"+host+"/p:1")
	ops := map[string]func(f *Fetcher) error{
		"fetch":      func(f *Fetcher) error { _, err := f.Fetch(ctx, ref); return err },
		"resolve":    func(f *Fetcher) error { _, err := f.Resolve(ctx, ref); return err },
		"signatures": func(f *Fetcher) error { _, err := f.Signatures(ctx, ref, d, false); return err },
		"push":       func(f *Fetcher) error { _, err := f.Push(ctx, ref, testWasm, nil); return err },
	}
	for _, r := range []string{
		"https://localhost:" + tokPort + "/token",
		"http://localhost:" + tokPort + "/token",
		"https://" + tokHost + "/token",
		"https://[::ffff:127.0.0.1]:" + tokPort + "/token",
	} {
		for name, op := range ops {
			t.Run(name+" "+r, func(t *testing.T) {
				realm = r
				f := newFetcher(t, Options{RootCAs: pool})
				asPublic(t, f, host)
				before := conns.Load()
				err := op(f)
				if err == nil || (strings.Contains(r, "localhost") && !errors.Is(err, ErrInsecure)) {
					t.Errorf("error = %v, want ErrInsecure", err)
				}
				if n := conns.Load() - before; n != 0 {
					t.Errorf("%d connections to the loopback token service", n)
				}
			})
		}
	}

	// A manifest or blob redirected to loopback by a public registry.
	for _, part := range []string{"/manifests/", "/blobs/"} {
		t.Run("redirect "+part, func(t *testing.T) {
			open := startRegistry(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet && strings.Contains(r.URL.Path, part) && r.URL.Query().Get("ok") == "" {
						http.Redirect(w, r, "https://localhost:"+tokPort+"/x", http.StatusTemporaryRedirect)
						return
					}
					h.ServeHTTP(w, r)
				})
			})
			if _, err := newFetcher(t, Options{}).Push(ctx, mustRef(t, "oci://"+open+"/p:1"), testWasm, nil); err != nil {
				t.Fatal(err)
			}
			f := newFetcher(t, Options{RootCAs: pool})
			asPublic(t, f, open)
			before := conns.Load()
			_, err := f.Fetch(ctx, mustRef(t, "oci://"+open+"/p:1"))
			if !errors.Is(err, ErrInsecure) {
				t.Errorf("error = %v, want ErrInsecure", err)
			}
			if n := conns.Load() - before; n != 0 {
				t.Errorf("%d connections to the loopback service", n)
			}
		})
	}
}

// TestReach: what a source may connect to, by how its host is named.
func TestReach(t *testing.T) {
	f := newFetcher(t, Options{})
	for _, c := range []struct {
		addr string
		want netClass
	}{
		{"8.8.8.8", netPublic},
		{"203.0.113.7", netPublic},
		{"2001:4860::8888", netPublic},
		{"10.1.2.3", netPrivate},
		{"192.168.0.1", netPrivate},
		{"100.100.100.200", netPrivate}, // a cloud metadata service in 100.64.0.0/10
		{"fd00:ec2::254", netPrivate},
		{"169.254.169.254", netLinkLocal},
		{"fe80::1", netLinkLocal},
		{"127.0.0.1", netLoopback},
		{"::1", netLoopback},
		{"::ffff:127.0.0.1", netLoopback},
		{"::ffff:10.0.0.1", netPrivate},
		{"0.0.0.0", netLoopback},
		{"0.1.2.3", netLoopback},
		{"::", netLoopback},
		{"224.0.0.1", netLinkLocal}, // link-local multicast
		{"239.1.2.3", netReserved},
		{"ff05::2", netReserved},
	} {
		if got := classOf(netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("classOf(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	for _, c := range []struct {
		host string
		want netClass
	}{
		{"127.0.0.1:5000", netAll},
		{"localhost:5000", netAll},
		{"[::1]:5000", netAll},
		{"10.0.0.5:5000", netPublic | netPrivate},
		{"169.254.1.1", netPublic | netLinkLocal},
		{"203.0.113.7:443", netPublic},
		{"unresolvable.invalid", netPublic},
	} {
		if got := f.reach(context.Background(), c.host); got != c.want {
			t.Errorf("reach(%s) = %v, want %v", c.host, got, c.want)
		}
	}
}
