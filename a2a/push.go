package a2a

import (
	"encoding/json"
	"strings"
)

// PushAuthentication is how the agent authenticates to a push receiver:
// it sends "Authorization: <Scheme> <Credentials>".
type PushAuthentication struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

// TaskPushNotificationConfig is where and how to deliver a task's push
// notifications (v1.0: one type, flat).
type TaskPushNotificationConfig struct {
	Tenant         string              `json:"tenant,omitempty"`
	ID             string              `json:"id,omitempty"`
	TaskID         string              `json:"taskId,omitempty"`
	URL            string              `json:"url"`
	Token          string              `json:"token,omitempty"`
	Authentication *PushAuthentication `json:"authentication,omitempty"`
}

type (
	pushConfigPlain  TaskPushNotificationConfig
	pushConfigFields struct {
		pushConfigPlain
		TaskIDSnake *string `json:"task_id"`
	}
)

func (*TaskPushNotificationConfig) jsonShape() any { return (*pushConfigFields)(nil) }

// UnmarshalJSON implements json.Unmarshaler, accepting ProtoJSON's
// snake_case task_id too.
func (c *TaskPushNotificationConfig) UnmarshalJSON(b []byte) error {
	var in pushConfigFields
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	c.setFromShape(&in)
	return nil
}

// setFromShape sets c from its shape (Decode and UnmarshalJSON).
func (c *TaskPushNotificationConfig) setFromShape(shape any) {
	in := shape.(*pushConfigFields)
	*c = TaskPushNotificationConfig(in.pushConfigPlain)
	pick(&c.TaskID, in.TaskIDSnake)
}

// ListTaskPushNotificationConfigsResponse is one page of a task's push
// configs. nextPageToken is always present ("" on the last page).
type ListTaskPushNotificationConfigsResponse struct {
	Configs       []TaskPushNotificationConfig `json:"configs"`
	NextPageToken string                       `json:"nextPageToken"`
}

// PushAuthentication03 is 0.3's authentication: a list of schemes, of
// which kfa uses the first.
type PushAuthentication03 struct {
	Schemes     []string `json:"schemes"`
	Credentials string   `json:"credentials,omitempty"`
}

// PushNotificationConfig03 is 0.3's config, nested under
// pushNotificationConfig and without the task id.
type PushNotificationConfig03 struct {
	ID             string                `json:"id,omitempty"`
	URL            string                `json:"url"`
	Token          string                `json:"token,omitempty"`
	Authentication *PushAuthentication03 `json:"authentication,omitempty"`
}

// TaskPushNotificationConfig03 is 0.3's TaskPushNotificationConfig.
type TaskPushNotificationConfig03 struct {
	TaskID                 string                   `json:"taskId"`
	PushNotificationConfig PushNotificationConfig03 `json:"pushNotificationConfig"`
}

// V1 converts a 0.3 config of taskID to 1.0. A 0.3 authentication with
// several schemes keeps the first: kfa sends one Authorization header.
func (c PushNotificationConfig03) V1(taskID string) TaskPushNotificationConfig {
	out := TaskPushNotificationConfig{ID: c.ID, TaskID: taskID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &PushAuthentication{Credentials: a.Credentials}
		if len(a.Schemes) > 0 {
			out.Authentication.Scheme = a.Schemes[0]
		}
	}
	return out
}

// ToV03 converts a 1.0 config to 0.3.
func (c TaskPushNotificationConfig) ToV03() TaskPushNotificationConfig03 {
	out := TaskPushNotificationConfig03{TaskID: c.TaskID, PushNotificationConfig: PushNotificationConfig03{
		ID: c.ID, URL: c.URL, Token: c.Token,
	}}
	if a := c.Authentication; a != nil {
		out.PushNotificationConfig.Authentication = &PushAuthentication03{Schemes: []string{a.Scheme}, Credentials: a.Credentials}
	}
	return out
}

// pushConfig03To1 converts the raw 0.3 pushNotificationConfig of
// message/send to the raw 1.0 taskPushNotificationConfig.
func pushConfig03To1(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return nil, nil
	}
	var c PushNotificationConfig03
	if err := CheckFields(raw, &c); err != nil {
		return nil, AsParam(err, "configuration.pushNotificationConfig.")
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, BadParam("configuration.pushNotificationConfig", "must be an object {url, token?, authentication?: {schemes, credentials}}")
	}
	return json.Marshal(c.V1(""))
}
