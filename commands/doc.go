// Package commands holds every command of kfa written once: its load
// plan (what it reads and locks, by key), the call of its decision in its
// domain package, and its write plan (the records, counters and change-log
// events the decision returned), over the storage seam (package storage).
// A store runs the plans (storage.Engine) and embeds Commands, so the
// domain's Store interfaces are implemented once, here, for every store.
//
// The package also describes once the kinds of record those commands read
// and write (schema.go): their keys and the indexes the plans use, and
// which records an index holds, so that no store decides that either.
//
// It holds no rule: each decision is its domain package's. It imports no
// store and no driver; the stores import it.
package commands
