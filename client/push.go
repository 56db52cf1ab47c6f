package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/kfa-project/kfa/a2a"
	"github.com/kfa-project/kfa/api"
)

// CreatePushConfig adds a push notification config to one of the
// caller's tasks (A2A CreateTaskPushNotificationConfig).
func (c *Client) CreatePushConfig(ctx context.Context, taskID string, cfg a2a.TaskPushNotificationConfig) (a2a.TaskPushNotificationConfig, error) {
	var out a2a.TaskPushNotificationConfig
	_, err := c.do(ctx, request{method: http.MethodPost, a2a: true, body: cfg,
		path: "/a2a/v1/tasks/" + url.PathEscape(taskID) + "/pushNotificationConfigs"}, &out)
	return out, err
}

// PushConfigs lists one page of a task's push notification configs.
func (c *Client) PushConfigs(ctx context.Context, taskID string, pageSize int, pageToken string) (a2a.ListTaskPushNotificationConfigsResponse, error) {
	var out a2a.ListTaskPushNotificationConfigsResponse
	_, err := c.do(ctx, request{method: http.MethodGet, a2a: true, query: pageQuery(pageSize, pageToken),
		path: "/a2a/v1/tasks/" + url.PathEscape(taskID) + "/pushNotificationConfigs"}, &out)
	return out, err
}

// DeletePushConfig deletes a push notification config of a task.
func (c *Client) DeletePushConfig(ctx context.Context, taskID, id string) error {
	_, err := c.do(ctx, request{method: http.MethodDelete, a2a: true,
		path: "/a2a/v1/tasks/" + url.PathEscape(taskID) + "/pushNotificationConfigs/" + url.PathEscape(id)}, nil)
	return err
}

// DeliveryQuery filters the operator's outbox listing. Zero fields do
// not filter.
type DeliveryQuery struct {
	State     string // pending, delivered or failed
	TaskID    string
	PageSize  int
	PageToken string
}

// Deliveries lists push notification deliveries, newest first.
func (c *Client) Deliveries(ctx context.Context, dq DeliveryQuery) (api.DeliveryList, error) {
	q := pageQuery(dq.PageSize, dq.PageToken)
	if dq.State != "" {
		q.Set("state", dq.State)
	}
	if dq.TaskID != "" {
		q.Set("taskId", dq.TaskID)
	}
	var out api.DeliveryList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/push/deliveries", query: q}, &out)
	return out, err
}

// RetryDelivery makes a failed delivery pending again, due now.
func (c *Client) RetryDelivery(ctx context.Context, id string) (api.Delivery, error) {
	var out api.Delivery
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/push/deliveries/" + url.PathEscape(id) + "/retry"}, &out)
	return out, err
}

// SigningKeys lists the signing keys, newest first.
func (c *Client) SigningKeys(ctx context.Context) (api.SigningKeyList, error) {
	var out api.SigningKeyList
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/admin/v1/push/keys"}, &out)
	return out, err
}

// RotateSigningKey makes a new current signing key.
func (c *Client) RotateSigningKey(ctx context.Context) (api.SigningKey, error) {
	var out api.SigningKey
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/admin/v1/push/keys/rotate"}, &out)
	return out, err
}
