// Builds gojq (github.com/itchyny/gojq, MIT) from the Go module proxy for
// recipes/gojq-pgo.toml: its main package is built straight from the
// module, unchanged.
module afterburner.example/gojq

go 1.21

require github.com/itchyny/gojq v0.12.17

require (
	github.com/itchyny/timefmt-go v0.1.6 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/mattn/go-runewidth v0.0.15 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	golang.org/x/sys v0.20.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
