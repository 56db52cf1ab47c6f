package changelog

import (
	"errors"
	"testing"
)

func TestPositionText(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    Position
		text string
	}{
		{"zero", Position{}, "0"},
		{"bbolt", Position{Seq: 42}, "42"},
		{"postgres", Position{Tx: 7, Seq: 9}, "7.9"},
		{"large", Position{Tx: 1 << 40, Seq: 1<<63 + 1}, "1099511627776.9223372036854775809"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.p.String(); got != tc.text {
				t.Fatalf("String() = %q, want %q", got, tc.text)
			}
			back, err := ParsePosition(tc.text)
			if err != nil || back != tc.p {
				t.Fatalf("ParsePosition(%q) = %v, %v; want %v", tc.text, back, err, tc.p)
			}
		})
	}
}

func TestParsePositionRefuses(t *testing.T) {
	for _, s := range []string{"", "x", "1.", ".1", "0.5", "-1", "1.2.3", "18446744073709551616", " 1"} {
		if _, err := ParsePosition(s); !errors.Is(err, ErrBadPosition) {
			t.Errorf("ParsePosition(%q) err = %v, want ErrBadPosition", s, err)
		}
	}
}

func TestPositionOrder(t *testing.T) {
	order := []Position{{}, {Seq: 1}, {Seq: 2}, {Tx: 1, Seq: 0}, {Tx: 1, Seq: 5}, {Tx: 2, Seq: 3}}
	for i, p := range order {
		for j, q := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := p.Compare(q); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", p, q, got, want)
			}
			if p.Before(q) != (want < 0) {
				t.Errorf("%v.Before(%v) = %v", p, q, p.Before(q))
			}
		}
	}
}

func TestSignal(t *testing.T) {
	var s Signal
	a, stopA := s.Subscribe()
	b, stopB := s.Subscribe()
	defer stopB()
	s.Notify()
	s.Notify() // merges into the full slot; never blocks
	for name, c := range map[string]<-chan struct{}{"a": a, "b": b} {
		select {
		case <-c:
		default:
			t.Fatalf("subscriber %s was not woken", name)
		}
		select {
		case <-c:
			t.Fatalf("subscriber %s woken twice for merged notifications", name)
		default:
		}
	}
	stopA()
	stopA()
	s.Notify()
	select {
	case <-a:
		t.Fatal("a stopped subscriber was woken")
	default:
	}
	select {
	case <-b:
	default:
		t.Fatal("b was not woken after a stopped")
	}
}
