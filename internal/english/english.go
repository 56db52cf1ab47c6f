// Package english writes counts in messages people read: "1 line",
// "2 lines", never "1 lines". Every message that counts something a
// person or an agent reads goes through Count.
package english

import "strconv"

// Count is n followed by one when n is 1, else by many: Count(1, "line",
// "lines") is "1 line", Count(0, "line", "lines") "0 lines".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
