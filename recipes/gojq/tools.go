//go:build tools

// Keeps gojq's command in this module's requirements (go mod tidy).
package tools

import _ "github.com/itchyny/gojq/cmd/gojq"
