package service

import (
	"context"
	"errors"
	"time"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/push"
	"github.com/kfa-project/kfa/signing"
)

// The operator's handles on push notifications: the outbox and the
// signing keys.

// errNoOutbox answers an operator built without the outbox.
var errNoOutbox = a2a.Errorf(a2a.Unavailable, "the push outbox is not available to this operator")

// Deliveries lists the outbox, newest first: state (pending, delivered,
// failed or "" for any), taskID ("" for any), pageSize (the default when
// nil), after (the last delivery id of the previous page).
func (o *Operator) Deliveries(ctx context.Context, state, taskID string, pageSize *int, after string) (push.DeliveryPage, error) {
	if o.d.Outbox == nil {
		return push.DeliveryPage{}, errNoOutbox
	}
	q, err := push.NewDeliveryQuery(state, taskID, pageSize, after)
	if err != nil {
		return push.DeliveryPage{}, err
	}
	page, err := o.d.Outbox.Deliveries(ctx, q)
	if errors.Is(err, push.ErrDeliveryNotFound) {
		return push.DeliveryPage{}, a2a.BadParam("pageToken", "is not a delivery id of this outbox")
	}
	return page, err
}

// RetryDelivery makes a failed delivery pending again, due now. Its
// change log event wakes the delivery worker of every process.
func (o *Operator) RetryDelivery(ctx context.Context, id string) (push.Delivery, error) {
	if o.d.Outbox == nil {
		return push.Delivery{}, errNoOutbox
	}
	d, err := o.d.Outbox.RetryDelivery(ctx, id, o.now().UTC().Truncate(time.Millisecond))
	switch {
	case errors.Is(err, push.ErrDeliveryNotFound):
		return d, a2a.Errorf(a2a.NotFound, "no delivery %s in the outbox", truncate(id, 64))
	case errors.Is(err, push.ErrNotFailed):
		return d, a2a.Errorf(a2a.UnsupportedOperation, "delivery %s has not failed: only a failed delivery is retried", truncate(id, 64))
	case errors.Is(err, push.ErrNotFound):
		return d, a2a.Errorf(a2a.UnsupportedOperation, "delivery %s cannot be retried: its config was deleted", truncate(id, 64))
	}
	return d, err
}

// SigningKeys lists the signing keys, the current one first.
func (o *Operator) SigningKeys(ctx context.Context) ([]signing.KeyInfo, error) {
	if o.d.Signer == nil {
		return nil, errNoOutbox
	}
	return o.d.Signer.Keys(ctx)
}

// RotateSigningKey makes a new current signing key; the old one stays in
// the JWKS for its grace.
func (o *Operator) RotateSigningKey(ctx context.Context) (signing.KeyInfo, error) {
	if o.d.Signer == nil {
		return signing.KeyInfo{}, errNoOutbox
	}
	return o.d.Signer.Rotate(ctx)
}

// now is the operator's clock.
func (o *Operator) now() time.Time {
	if o.d.Now == nil {
		return time.Now()
	}
	return o.d.Now()
}
