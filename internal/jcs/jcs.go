package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonicalize returns the canonical form of the JSON value in b. It
// refuses invalid JSON, invalid UTF-8, duplicate member names and
// numbers a double cannot hold (RFC 8785 section 3.2.2.3 requires
// I-JSON input).
func Canonicalize(b []byte) ([]byte, error) {
	if !utf8.Valid(b) {
		return nil, errors.New("jcs: invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	if err := value(dec, &out); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("jcs: data after the value")
	}
	return out.Bytes(), nil
}

// value copies one value from dec to out, canonically.
func value(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("jcs: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return object(dec, out)
		}
		return array(dec, out)
	case string:
		writeString(out, t)
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return fmt.Errorf("jcs: number %s: %w", t, err)
		}
		s, err := Number(f)
		if err != nil {
			return err
		}
		out.WriteString(s)
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

type member struct {
	name  string
	key   []uint16
	value []byte
}

func object(dec *json.Decoder, out *bytes.Buffer) error {
	var ms []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("jcs: %w", err)
		}
		name := tok.(string) // the decoder only yields strings here
		if seen[name] {
			return fmt.Errorf("jcs: duplicate member %q", name)
		}
		seen[name] = true
		var v bytes.Buffer
		if err := value(dec, &v); err != nil {
			return err
		}
		ms = append(ms, member{name: name, key: utf16.Encode([]rune(name)), value: v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("jcs: %w", err)
	}
	slices.SortFunc(ms, func(a, b member) int { return slices.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(out, m.name)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return nil
}

func array(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := value(dec, out); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return fmt.Errorf("jcs: %w", err)
	}
	out.WriteByte(']')
	return nil
}

// writeString writes s as ECMAScript's JSON.stringify does: only the
// quote, the backslash and control characters are escaped, with the
// short forms where they exist.
func writeString(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(out, `\u%04x`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}

// Number writes f as ECMAScript's Number.prototype.toString does (the
// shortest digits that read back as f; exponent form below 1e-6 and from
// 1e21). NaN and the infinities are not JSON.
func Number(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("jcs: %v is not a JSON number", f)
	}
	if f == 0 {
		return "0", nil // -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest round-tripping digits d1.d2...dk and exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1 // the value is 0.digits × 10^n
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		es := "+"
		if n-1 < 0 {
			es = "-"
		}
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		s += "e" + es + strconv.Itoa(abs(n-1))
	}
	return sign + s, nil
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
