package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ProtocolCaching is the MCP protocol version that added ttlMs,
// cacheScope and resultType to results. The SDK puts ttlMs and cacheScope
// on every list result whatever the version the client speaks; a client
// of an earlier version gets its results without them.
const ProtocolCaching = "2026-07-28"

// newerResultFields are the result fields a client of a version before
// ProtocolCaching does not know.
var newerResultFields = map[string]bool{"ttlMs": true, "cacheScope": true, "resultType": true}

// AdaptResponse returns msg, a JSON-RPC response or a batch of them, as a
// client that negotiated protocol version (empty: not known, an earlier
// one) reads it: without the result fields of later versions, and with a
// JSON-RPC error code where the SDK sent code 0 (parameters of initialize
// that do not decode, a call before initialize). msg is returned as it is
// when nothing changes.
func AdaptResponse(msg []byte, version string) []byte {
	strip := version < ProtocolCaching
	if !(strip && (bytes.Contains(msg, []byte(`"ttlMs"`)) || bytes.Contains(msg, []byte(`"cacheScope"`)) ||
		bytes.Contains(msg, []byte(`"resultType"`)))) && !bytes.Contains(msg, []byte(`"code":0`)) {
		return msg
	}
	trimmed := bytes.TrimSpace(msg)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil {
			return msg
		}
		for i, m := range batch {
			batch[i] = adaptOne(m, strip)
		}
		b, err := json.Marshal(batch)
		if err != nil {
			return msg
		}
		return b
	}
	return adaptOne(msg, strip)
}

func adaptOne(msg []byte, strip bool) []byte {
	keys, values, err := members(bytes.TrimSpace(msg))
	if err != nil {
		return msg
	}
	for i, k := range keys {
		switch {
		case k == "result" && strip:
			rk, rv, err := members(values[i])
			if err != nil {
				continue // not an object
			}
			var kk []string
			var vv []json.RawMessage
			for j := range rk {
				if !newerResultFields[rk[j]] {
					kk, vv = append(kk, rk[j]), append(vv, rv[j])
				}
			}
			values[i] = object(kk, vv)
		case k == "error":
			var e struct {
				Code    *int64 `json:"code"`
				Message string `json:"message"`
			}
			if json.Unmarshal(values[i], &e) != nil || e.Code == nil || *e.Code != 0 {
				continue
			}
			ek, ev, err := members(values[i])
			if err != nil {
				continue
			}
			for j := range ek {
				if ek[j] == "code" {
					ev[j], _ = json.Marshal(codeFor(e.Message))
				}
			}
			values[i] = object(ek, ev)
		}
	}
	return object(keys, values)
}

// codeFor gives an SDK error sent with code 0 the code it means: its
// parameters did not decode (invalid params), or it came before
// initialize (invalid request).
func codeFor(msg string) int64 {
	switch {
	case strings.Contains(msg, "unmarshaling"), strings.Contains(msg, "invalid params"):
		return jsonrpc.CodeInvalidParams
	case strings.Contains(msg, "invalid during session initialization"):
		return jsonrpc.CodeInvalidRequest
	}
	return jsonrpc.CodeInternalError
}

// object writes a JSON object with the members in order.
func object(keys []string, values []json.RawMessage) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		_ = enc.Encode(k)
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		b.Write(values[i])
	}
	b.WriteByte('}')
	return b.Bytes()
}
