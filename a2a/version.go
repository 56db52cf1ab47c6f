package a2a

import "strings"

// Protocol versions kfa knows.
const (
	Version10 = "1.0"
	Version03 = "0.3"
)

// VersionHeader carries the protocol version of a request.
const VersionHeader = "A2A-Version"

// NormalizeVersion reduces a version value to Major.Minor: "1.0.1" -> "1.0".
// An empty value means 0.3, as the spec requires. Values that are not
// dotted numbers come back unchanged so the caller can name them.
func NormalizeVersion(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return Version03
	}
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return v
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return v
		}
	}
	return trimZeros(parts[0]) + "." + trimZeros(parts[1])
}

func trimZeros(s string) string {
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return "0"
	}
	return s
}
