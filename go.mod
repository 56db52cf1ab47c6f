module github.com/kfa-project/kfa

go 1.26.0

require (
	github.com/gorilla/mux v1.8.1
	github.com/oklog/ulid/v2 v2.1.2
	go.etcd.io/bbolt v1.5.0
	golang.org/x/time v0.16.0
)

require golang.org/x/sys v0.45.0 // indirect
