package a2a

import "testing"

// benchAskBody is kfa-bench's ask (cmd/kfa-bench askBody): the body of
// every durable ask the benchmark makes.
var benchAskBody = []byte(`{"message":{"messageId":"cpu-1k","role":"ROLE_USER","parts":[{"data":{"action":"ask",` +
	`"question":"How do I keep an A2A task open across a server restart without losing its subscribers? (bench 3/17)",` +
	`"details":"We run kfa behind a reverse proxy with two replicas. After a deploy the streams drop and the agents ` +
	`re-subscribe, but some of them see a terminal task and stop polling. What is the recommended reconnect logic?",` +
	`"kind":"howto","product":"kfa"},"mediaType":"application/json"}]},"configuration":{"returnImmediately":true}}`)

// BenchmarkDecodeAsk: an ask's body read once by Decode, against the three
// passes it replaces (CheckJSON, CheckFields, json.Unmarshal). Compare
// allocs/op and B/op, which the machine's load does not move.
func BenchmarkDecodeAsk(b *testing.B) {
	for _, c := range []struct {
		name string
		fn   func([]byte, any) error
	}{{"Decode", Decode}, {"threePasses", threePasses}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				var req SendMessageRequest
				if err := c.fn(benchAskBody, &req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
