package certs

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/acme/autocert"
)

// Cache keeps the ACME state by key: the account key, each certificate
// with its private key (PEM), and the answers to pending challenges.
// Get reports a missing key with ErrCacheMiss.
type Cache = autocert.Cache

// ErrCacheMiss is a key the cache does not hold.
var ErrCacheMiss = autocert.ErrCacheMiss

// ErrClaimed is a certificate another process is obtaining now: the
// handshake that asked fails, and the next one finds it in the cache.
var ErrClaimed = errors.New("another process is obtaining this certificate; try again in a moment")

// DirCache keeps the ACME state in dir, created readable by this user
// only (0700; each file is written 0600), as the private keys in it ask.
func DirCache(dir string) (Cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// MkdirAll leaves an existing directory's mode alone.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, err
	}
	return autocert.DirCache(dir), nil
}

// Claimer is the part of a cache several processes share that lets one
// of them obtain a certificate while the others wait for it.
type Claimer interface {
	// Claim marks key as being obtained by the caller for ttl, unless the
	// key holds a value or another caller's claim that has not run out;
	// it reports whether the caller now holds the claim. A Put of the key
	// ends the claim.
	Claim(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// ClaimTTL is how long a claim holds: a process that died while
// obtaining a certificate delays the others by this much at most.
const ClaimTTL = 3 * time.Minute

// SharedCache is a cache that several processes share (on PostgreSQL):
// the first process to miss a certificate claims it and obtains it; the
// others, until it is stored, answer ErrClaimed instead of obtaining
// their own. So one issuance serves every process, and a group of
// processes that start together does not spend the CA's duplicate
// certificate limit (Let's Encrypt: 5 a week for one set of names).
func SharedCache(c Cache, cl Claimer) Cache { return sharedCache{Cache: c, claim: cl} }

type sharedCache struct {
	Cache
	claim Claimer
}

func (s sharedCache) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Cache.Get(ctx, key)
	if !errors.Is(err, ErrCacheMiss) || !isCertKey(key) {
		return b, err
	}
	ok, err := s.claim.Claim(ctx, key, ClaimTTL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("claim %s: %w", key, err)
	case !ok:
		return nil, fmt.Errorf("%s: %w", key, ErrClaimed)
	}
	return nil, ErrCacheMiss
}

// isCertKey tells a certificate's key (domain, domain+rsa) from the
// account key and the challenges' answers, which are never claimed: two
// accounts are harmless, and an answer is looked up, not obtained.
func isCertKey(key string) bool {
	_, suffix, ok := strings.Cut(key, "+")
	return !ok || suffix == "rsa"
}

// hidingCache hides the certificates of one domain until the next Put of
// each: a manager on it obtains new ones rather than loading those that
// the CA asked to replace, while every other process keeps reading (and
// serving) them until the new ones are stored.
type hidingCache struct {
	Cache
	mu     sync.Mutex
	hidden map[string]bool
}

func hide(c Cache, domain string) *hidingCache {
	return &hidingCache{Cache: c, hidden: map[string]bool{domain: true, domain + "+rsa": true}}
}

func (h *hidingCache) Get(ctx context.Context, key string) ([]byte, error) {
	h.mu.Lock()
	hidden := h.hidden[key]
	h.mu.Unlock()
	if hidden {
		return nil, ErrCacheMiss
	}
	return h.Cache.Get(ctx, key)
}

func (h *hidingCache) Put(ctx context.Context, key string, data []byte) error {
	if err := h.Cache.Put(ctx, key, data); err != nil {
		return err
	}
	h.mu.Lock()
	delete(h.hidden, key)
	h.mu.Unlock()
	return nil
}

// namespaced keeps each CA's state apart in one cache: a certificate
// from Let's Encrypt's staging is never served once the directory is
// production's, and going back finds staging's account again.
type namespaced struct {
	Cache
	prefix string
}

func (n namespaced) Get(ctx context.Context, key string) ([]byte, error) {
	return n.Cache.Get(ctx, n.prefix+key)
}

func (n namespaced) Put(ctx context.Context, key string, data []byte) error {
	return n.Cache.Put(ctx, n.prefix+key, data)
}

func (n namespaced) Delete(ctx context.Context, key string) error {
	return n.Cache.Delete(ctx, n.prefix+key)
}

// CacheKey is the cache's key of autocert's key (a domain, the account
// key "acme_account+key", ...) for the CA of the directory URL: the
// directory's host, a short digest of the whole URL (two directories of
// one host stay apart), then the key, e.g.
// acme-v02.api.letsencrypt.org-6b7a29_kfa.example.com; a file name in
// <data>/acme, a key in tls_cache.
func CacheKey(directory, key string) string {
	host := directory
	if u, err := url.Parse(directory); err == nil && u.Host != "" {
		host = u.Host
	}
	host = strings.NewReplacer(":", "_", "/", "_", "+", "_").Replace(strings.ToLower(host))
	sum := sha256.Sum256([]byte(directory))
	return fmt.Sprintf("%s-%x_%s", host, sum[:3], key)
}
