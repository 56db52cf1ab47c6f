package knowledge

import (
	"encoding/json"
	"math"
)

// MarshalJSON writes the hit with updatedAt in kfa's timestamp form (UTC,
// milliseconds, "Z") and the score rounded to four decimals: clients
// compare timestamps as strings, and more digits of a score mean nothing.
func (h Hit) MarshalJSON() ([]byte, error) {
	type plain Hit
	return json.Marshal(struct {
		plain
		Score     float64 `json:"score"`
		UpdatedAt string  `json:"updatedAt"`
	}{plain: plain(h), Score: math.Round(h.Score*1e4) / 1e4, UpdatedAt: FormatTime(h.UpdatedAt)})
}
