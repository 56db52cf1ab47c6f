package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kfa-project/kfa/internal/pgtest"
	"github.com/kfa-project/kfa/store/postgres"
)

// TestTLSCache: what one process stores another reads; a miss is
// ErrTLSCacheMiss; Delete forgets.
func TestTLSCache(t *testing.T) {
	url := pgtest.URL(t)
	a, b := openURL(t, url).TLSCache(), openURL(t, url).TLSCache()
	ctx := context.Background()
	if _, err := a.Get(ctx, "kfa.example.com"); !errors.Is(err, postgres.ErrTLSCacheMiss) {
		t.Fatalf("get of a missing key: %v, want ErrTLSCacheMiss", err)
	}
	if err := a.Put(ctx, "kfa.example.com", []byte("pem 1")); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, "kfa.example.com", []byte("pem 2")); err != nil {
		t.Fatal(err)
	}
	if v, err := b.Get(ctx, "kfa.example.com"); err != nil || string(v) != "pem 2" {
		t.Fatalf("the other process reads %q, %v; want pem 2", v, err)
	}
	if err := b.Delete(ctx, "kfa.example.com"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "kfa.example.com"); err != nil {
		t.Fatalf("delete of a missing key: %v", err)
	}
	if _, err := a.Get(ctx, "kfa.example.com"); !errors.Is(err, postgres.ErrTLSCacheMiss) {
		t.Fatalf("get after delete: %v, want ErrTLSCacheMiss", err)
	}
}

// TestTLSCacheClaim races claims of one key from two pools: exactly one
// wins; a claimed key is still a miss; Put ends the claim and a key with
// a value cannot be claimed; a claim that ran out can be taken again.
func TestTLSCacheClaim(t *testing.T) {
	url := pgtest.URL(t)
	caches := []postgres.TLSCache{openURL(t, url).TLSCache(), openURL(t, url).TLSCache()}
	ctx := context.Background()
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := caches[i%2].Claim(ctx, "race.example.com", time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Fatalf("%d claims won, want exactly 1", n)
	}
	if _, err := caches[1].Get(ctx, "race.example.com"); !errors.Is(err, postgres.ErrTLSCacheMiss) {
		t.Fatalf("get of a claimed key: %v, want ErrTLSCacheMiss", err)
	}
	if err := caches[0].Put(ctx, "race.example.com", []byte("pem")); err != nil {
		t.Fatal(err)
	}
	if ok, err := caches[1].Claim(ctx, "race.example.com", time.Minute); err != nil || ok {
		t.Fatalf("claim of a key with a value: %v, %v; want false", ok, err)
	}

	// A claim whose time is up (here from the start: the database's
	// clock decides) is taken again.
	if ok, err := caches[0].Claim(ctx, "short.example.com", -time.Minute); err != nil || !ok {
		t.Fatalf("first claim: %v, %v", ok, err)
	}
	if ok, err := caches[1].Claim(ctx, "short.example.com", time.Minute); err != nil || !ok {
		t.Fatalf("claim of a key whose claim ran out: %v, %v; want true", ok, err)
	}
	if ok, err := caches[0].Claim(ctx, "short.example.com", time.Minute); err != nil || ok {
		t.Fatalf("claim of a key claimed for a minute: %v, %v; want false", ok, err)
	}
}
