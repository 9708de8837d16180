// Package config reads wasmcp.toml, the server's configuration file.
//
// The file is decoded strictly: a key the format does not define is an
// error that names the key and its line, so a typo never silently turns a
// setting off. Decoding ([Parse], [Load]) and checking ([Config.Validate])
// are separate steps; Validate reports every problem at once.
//
// Beyond plain TOML, string values may refer to the environment as
// ${NAME} or ${NAME:-default} (the default applies when NAME is unset or
// empty; "$$" is a literal "$"), sizes are written "64MiB", "512KiB" or as
// a plain number of bytes ("4MB" is refused as ambiguous), durations as
// "5s" or "250ms", and
// relative paths are resolved against the directory of the file.
//
//	[server]
//	name = "my-tools"
//	plugin_dirs = ["plugins"]
//
//	[limits]
//	memory = "64MiB"
//	timeout = "10s"
//
//	[[plugins]]
//	name = "weather"
//	path = "weather.wasm"
//	[plugins.grants]
//	http = ["https://api.weather.gov/"]
//	config = { api_key = "${WEATHER_KEY}" }
//
// This package is the only importer of github.com/BurntSushi/toml.
package config
