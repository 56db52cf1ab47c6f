package a2a

// The leaf values and arrays of Decode (strict.go): each decodes one
// JSON value into its Go value, or keeps the first mismatch for Decode.

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// array decodes an array into a slice or an interface.
func (d *decoder) array(v reflect.Value, depth int, path string) error {
	if depth > MaxJSONDepth {
		return &ShapeError{Offset: d.i, Msg: fmt.Sprintf("JSON nested deeper than %d levels", MaxJSONDepth)}
	}
	var list []any // for an interface
	iface := v.Kind() == reflect.Interface && v.NumMethod() == 0
	if !iface && v.Kind() != reflect.Slice {
		d.typeErr("array", v.Type(), path)
		v = reflect.Value{}
	}
	d.i++ // [
	d.ws()
	n := 0
	if v.IsValid() && !iface {
		v.SetLen(0)
	}
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		d.setArray(v, iface, list, 0)
		return nil
	}
	for {
		d.ws()
		at := path + "[" + strconv.Itoa(n) + "]"
		switch {
		case !v.IsValid():
			if err := d.checker.value(depth); err != nil {
				return err
			}
		case iface:
			var x any
			if err := d.value(reflect.ValueOf(&x).Elem(), depth, at); err != nil {
				return err
			}
			list = append(list, x)
		default:
			if n >= v.Cap() {
				v.Grow(1)
			}
			v.SetLen(n + 1)
			if err := d.value(v.Index(n), depth, at); err != nil {
				return err
			}
		}
		n++
		d.ws()
		if d.i >= len(d.b) {
			return d.syntax("unexpected end of JSON in array")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			d.setArray(v, iface, list, n)
			return nil
		default:
			return d.syntax("expected ',' or ']' in array")
		}
	}
}

// setArray finishes an array of n values: an empty JSON array is an
// empty (not nil) slice, as json.Unmarshal makes it.
func (d *decoder) setArray(v reflect.Value, iface bool, list []any, n int) {
	switch {
	case !v.IsValid():
	case iface:
		if list == nil {
			list = []any{}
		}
		v.Set(reflect.ValueOf(list))
	case n == 0 && v.IsNil():
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
}

// string decodes a string into a string, a []byte (base64, as
// json.Unmarshal reads it) or an interface.
func (d *decoder) string(v reflect.Value, path string) error {
	s, err := d.str()
	if err != nil {
		return err
	}
	switch {
	case v.Kind() == reflect.String:
		v.SetString(string(s))
	case v.Kind() == reflect.Interface && v.NumMethod() == 0:
		v.Set(reflect.ValueOf(string(s)))
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(out, s)
		if err != nil && d.valueErr == nil {
			d.valueErr = err
		}
		v.SetBytes(out[:n])
	default:
		d.typeErr("string", v.Type(), path)
	}
	return nil
}

// bool decodes true or false into a bool or an interface.
func (d *decoder) bool(v reflect.Value, b bool, path string) error {
	lit := "false"
	if b {
		lit = "true"
	}
	if err := d.lit(lit); err != nil {
		return err
	}
	switch {
	case v.Kind() == reflect.Bool:
		v.SetBool(b)
	case v.Kind() == reflect.Interface && v.NumMethod() == 0:
		v.Set(reflect.ValueOf(b))
	default:
		d.typeErr("bool", v.Type(), path)
	}
	return nil
}

// number decodes a number into a number kind or an interface (float64),
// as json.Unmarshal does: a fraction or an overflow in an integer is
// "number 1.5".
func (d *decoder) number(v reflect.Value, path string) error {
	start := d.i
	if err := d.checker.number(); err != nil {
		return err
	}
	lit := string(d.b[start:d.i])
	if v.Type() == numberType {
		v.SetString(lit)
		return nil
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil || v.OverflowInt(n) {
			d.typeErr("number "+lit, v.Type(), path)
			return nil
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(lit, 10, 64)
		if err != nil || v.OverflowUint(n) {
			d.typeErr("number "+lit, v.Type(), path)
			return nil
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(lit, v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			d.typeErr("number "+lit, v.Type(), path)
			return nil
		}
		v.SetFloat(f)
	case reflect.Interface:
		if v.NumMethod() != 0 {
			d.typeErr("number", v.Type(), path)
			return nil
		}
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			d.typeErr("number "+lit, reflect.TypeFor[float64](), path)
			return nil
		}
		v.Set(reflect.ValueOf(f))
	default:
		d.typeErr("number", v.Type(), path)
	}
	return nil
}

// foldedKeys are the keys of one object so far, to refuse two that fold
// alike as encoding/json matches them (strings.EqualFold is that match:
// simple Unicode case folding, rune by rune, on keys already checked to be
// UTF-8). A few are compared one by one, without folding or allocating;
// past smallObject they are kept folded in a map, so that an object of
// many keys costs linear time, not quadratic.
type foldedKeys struct {
	keys   []string
	folded map[string]string // folded key -> the key, once past smallObject
}

// smallObject is the most keys an object compares one by one.
const smallObject = 8

// add refuses key, at offset at, when a key before it folds alike.
func (f *foldedKeys) add(key string, at int) error {
	var first string
	dup := false
	if f.folded == nil {
		for _, k := range f.keys {
			if strings.EqualFold(k, key) {
				first, dup = k, true
				break
			}
		}
		if !dup {
			f.keys = append(f.keys, key)
			if len(f.keys) > smallObject {
				f.folded = make(map[string]string, 2*smallObject)
				for _, k := range f.keys {
					f.folded[foldKey([]byte(k))] = k
				}
			}
			return nil
		}
	} else {
		folded := foldKey([]byte(key))
		if first, dup = f.folded[folded]; !dup {
			f.folded[folded] = key
			return nil
		}
	}
	if first == key {
		return &ShapeError{Offset: at, Msg: fmt.Sprintf("duplicate key %q", key)}
	}
	return &ShapeError{Offset: at, Msg: fmt.Sprintf("duplicate key %q: it differs from %q only in case", key, first)}
}

// unquote decodes the escapes of raw, a string's bytes between its
// quotes, which the checker has found valid. Without escapes it is raw
// itself. An escaped surrogate that is not one of a pair is U+FFFD, as
// encoding/json reads it.
func unquote(raw []byte) []byte {
	i := 0
	for i < len(raw) && raw[i] != '\\' {
		i++
	}
	if i == len(raw) {
		return raw
	}
	out := make([]byte, i, len(raw))
	copy(out, raw[:i])
	for i < len(raw) {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		i++
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				// i is on the escape's last digit; a pair's second half
				// would follow it: \uXXXX.
				r2 := rune(-1)
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 = hex4(raw[i+3 : i+7])
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		}
		i++
	}
	return out
}

// hex4 is the value of four hex digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
