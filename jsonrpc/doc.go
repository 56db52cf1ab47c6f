// Package jsonrpc is the A2A JSON-RPC 2.0 binding, at POST /a2a/jsonrpc:
// the v1.0 methods (SendMessage, GetTask, ListTasks, CancelTask,
// SendStreamingMessage, SubscribeToTask, GetExtendedAgentCard and the push
// config methods) and the 0.3 slash names with 0.3 shapes (message/send,
// tasks/get, ...). It calls the same service layer as the HTTP+JSON
// binding, so both behave alike.
//
// A2A errors come back with HTTP 200 and a JSON-RPC error object whose data
// holds the google.rpc ErrorInfo (the official Go client ignores bodies of
// other statuses). Streaming methods answer Server-Sent Events whose data
// lines are whole JSON-RPC responses; an error before the stream starts is
// sent as one such event. Batches (JSON arrays) are refused with one
// InvalidRequest error: send one request per HTTP request.
package jsonrpc
