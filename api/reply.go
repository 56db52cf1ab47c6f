package api

import (
	"encoding/json"

	"github.com/kfa-project/kfa/a2a"
)

// UnmarshalJSON reads a reply body and refuses a field other than body,
// naming it: a misspelt {"text": "..."} would otherwise read as a reply
// with no body, and the error would not say why.
func (r *ReplyRequest) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	for k := range fields {
		// Exactly: encoding/json would take "BODY" (or "bodY") for body.
		if k != "body" {
			return a2a.BadParam(k, `is not a field of a reply; send {"body": "..."}`)
		}
	}
	type plain ReplyRequest // without this method
	return json.Unmarshal(b, (*plain)(r))
}
