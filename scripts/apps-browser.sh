#!/usr/bin/env bash
# The MCP Apps browser test: headless Chromium runs a host page built on
# @modelcontextprotocol/ext-apps's AppBridge (scripts/apps-browser/host.js)
# against `wasmcp serve --http` (loopback) serving examples/go-dashboard.
# The page calls service_metrics, reads the app from its ui:// resource,
# renders it in an iframe sandboxed to scripts with the CSP its _meta.ui
# declares; puppeteer-core checks the rendered table and chart, clicks the
# app's Next and Refresh (the app calls the app-only metrics_page through
# the host), sorts, checks that a fetch to the origin the host narrowed
# away is blocked by the CSP and one to the granted origin is not, and
# takes a screenshot.
#
#   scripts/apps-browser.sh            run; screenshot in .cache/apps-browser/apps-dashboard.png
#   scripts/apps-browser.sh --update   also copy it to docs/img/apps-dashboard.png
#
# Needs chromium (Debian; scripts/install-deps.sh installs it, or set
# CHROMIUM) and node/npm. The npm packages are installed with `npm ci`
# from scripts/apps-browser/package-lock.json into .cache/apps-browser
# (only when missing or when the lockfile changed). Exit status 0 when
# every check passed.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
update=0
[ "${1:-}" = "--update" ] && update=1
src="$root/scripts/apps-browser"
cache="$root/.cache/apps-browser"
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
[ -n "$chromium" ] || { echo "apps-browser: chromium is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
command -v npm >/dev/null || { echo "apps-browser: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }

if ! cmp -s "$src/package-lock.json" "$cache/.installed"; then
	echo "apps-browser: installing the npm packages into ${cache#"$root"/}" >&2
	rm -rf "$cache" && mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
	cp "$src/package-lock.json" "$cache/.installed"
fi
cp "$src/host.html" "$src/host.js" "$src/run.mjs" "$cache/"
(cd "$cache" && ./node_modules/.bin/esbuild host.js --bundle --format=iife --platform=browser \
	--target=chrome120 --outfile=host.bundle.js --log-level=warning)

work="$(mktemp -d)"
log="$work/server.log"
server=""
stop() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$work"
}
trap stop EXIT
go build -o "$work/wasmcp" ./cmd/wasmcp
# The app asks for https://api.example.com and https://metrics.example.org;
# the grant covers only the first, so the host narrows the second away.
cat >"$work/wasmcp.toml" <<TOML
[server]
name = "apps-browser"
watch = false
[[plugins]]
name = "dashboard"
path = "$root/examples/go-dashboard/go-dashboard.wasm"
[plugins.grants]
http = ["https://api.example.com/"]
TOML
"$work/wasmcp" serve --config "$work/wasmcp.toml" --http 127.0.0.1:0 2>"$log" &
server=$!
url=""
for _ in $(seq 900); do # 90 s: the first start compiles the plugin
	url="$(sed -n 's/.*serving MCP on \(http:\/\/[^ "]*\).*/\1/p' "$log" | head -n 1)"
	[ -n "$url" ] && break
	kill -0 "$server" 2>/dev/null || { echo "apps-browser: the server exited:" >&2; cat "$log" >&2; exit 1; }
	sleep 0.1
done
[ -n "$url" ] || { echo "apps-browser: the server printed no URL within 90 s" >&2; cat "$log" >&2; exit 1; }
echo "apps-browser: $("$chromium" --version 2>/dev/null | head -n 1), node $(node --version), server $url"
shot="$cache/apps-dashboard.png"
if ! CHROMIUM="$chromium" node "$cache/run.mjs" "$url" "$shot"; then
	echo "apps-browser: server log:" >&2
	cat "$log" >&2
	exit 1
fi
grep -q 'narrowed away.*metrics.example.org' "$log" ||
	{ echo "apps-browser: the server did not log the narrowed origin:" >&2; cat "$log" >&2; exit 1; }
if [ $update = 1 ]; then
	mkdir -p docs/img && cp "$shot" docs/img/apps-dashboard.png && echo "apps-browser: updated docs/img/apps-dashboard.png"
fi
