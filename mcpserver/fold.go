package mcpserver

import "strings"

// foldMatch returns the name in known that key matches other than
// exactly: equal under Unicode case folding ("Query", "QUERY", and "ſ"
// for "s" or the Kelvin sign for "k"), not equal byte for byte. encoding/json would take such a key for the field, and the last
// of two such keys would win; the SDK's decoder would not, so two readers
// of one message could disagree on its content. kfa refuses them.
func foldMatch(key string, known []string) (string, bool) {
	for _, k := range known {
		if key == k {
			return "", false
		}
	}
	for _, k := range known {
		if strings.EqualFold(key, k) {
			return k, true
		}
	}
	return "", false
}
