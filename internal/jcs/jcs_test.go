package jcs

import (
	"math"
	"testing"
)

// The examples of RFC 8785 (sections 3.2.2 and appendix B) and the
// corner cases of its rules.
func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"rfc 8785 section 3.2.2", `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`},
		{"keys sorted by UTF-16 code units", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"},
		{"nested, whitespace dropped", ` { "b" : [ 1 , { "d":1, "c":2 } ], "a" : {} } `, `{"a":{},"b":[1,{"c":2,"d":1}]}`},
		{"empty array", `[]`, `[]`},
		{"control characters", `"\u0001\b\f\t\u001f"`, `"\u0001\b\f\t\u001f"`},
		{"no escape for slash or non-ASCII", `"a/b\u00e9"`, `"a/bé"`},
		{"negative zero", `-0`, `0`},
		{"integers", `[0, 1, -1, 100, 1e2, 123456789012345680000]`, `[0,1,-1,100,100,123456789012345680000]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in string }{
		{"duplicate member", `{"a":1,"a":2}`},
		{"invalid UTF-8", "\"\xff\""},
		{"trailing data", `{} {}`},
		{"not JSON", `{"a":}`},
		{"number out of range", `1e400`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := Canonicalize([]byte(tc.in)); err == nil {
				t.Fatalf("accepted: %s", got)
			}
		})
	}
}

// The number examples of RFC 8785 appendix B (ECMAScript formatting).
func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	} {
		f := math.Float64frombits(tc.bits)
		got, err := Number(f)
		if err != nil || got != tc.want {
			t.Errorf("%#016x: %q %v, want %q", tc.bits, got, err, tc.want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Number(f); err == nil {
			t.Errorf("%v accepted", f)
		}
	}
}
