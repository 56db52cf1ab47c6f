package trust

import (
	"math"
	"time"
)

// The trust formula (docs/search.md). An item's trust is the sum of its
// standing signals' weights, each halved for every HalfLife of its age:
//
//	trust(now) = Σ weight(signal) · 2^(-(now - signal.At) / HalfLife)
//
// with weight 1 for a "worked" verification, -0.5 for a "failed" one,
// and +0.1 or -0.1 for an up or a down vote: verifications first (one
// fresh "worked" is worth ten fresh up votes), votes second, and recent
// signals before old ones (a "worked" from last month weighs 0.94, one
// from two years ago 0.25).
const (
	WorkedWeight = 1.0
	FailedWeight = -0.5
	VoteWeight   = 0.1
	HalfLife     = 365 * 24 * time.Hour
)

// Epoch is the time every tally's Weight is expressed at. Since every
// signal decays at the same rate, trust at Epoch orders items as trust
// now does, so an index ranks by Weight without a clock.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// growth is 2^((at - Epoch) / HalfLife): what a signal made at at weighs
// at Epoch, per unit of weight.
func growth(at time.Time) float64 {
	return math.Exp2(float64(at.Sub(Epoch)) / float64(HalfLife))
}

// weightAt is a signal of weight w made at at, expressed at Epoch.
func weightAt(w float64, at time.Time) float64 { return w * growth(at) }

// TrustAt is the trust of an item whose Weight is w, at now.
func TrustAt(w float64, now time.Time) float64 {
	if w == 0 {
		return 0
	}
	return round(w/growth(now), 3)
}

// Trust is t's trust at now.
func (t Tally) Trust(now time.Time) float64 { return TrustAt(t.Weight, now) }

// voteWeight is the weight of a standing vote of value v.
func voteWeight(v int) float64 { return VoteWeight * float64(v) }

// outcomeWeight is the weight of a standing verification of outcome o.
func outcomeWeight(o Outcome) float64 {
	if o == Worked {
		return WorkedWeight
	}
	return FailedWeight
}

// settle removes the float dust that adding and taking away the same
// weights leaves: with no standing signal left, the weight is 0.
func (t *Tally) settle() {
	if t.Up == 0 && t.Down == 0 && t.Worked == 0 && t.Failed == 0 {
		t.Weight = 0
	}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}
