package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Pages are the pages each server's bbolt wrote per write during the
// write rounds (warm-ups included): a commit writes every page its
// transaction touched, plus the meta page. kfa's are read from its
// /metrics (kfa_bbolt_writes_total), the create ceiling's from its /stats.
type Pages struct {
	PerAsk    float64 `json:"perAsk"`
	PerCreate float64 `json:"perCreate"`
}

// pageCount is a snapshot of both servers' page writes.
type pageCount struct {
	kfa, ceiling, creates float64
	err                   error
}

// countPages reads both servers' page writes (and the ceiling's creates).
func countPages(ctx context.Context, hc *http.Client, kfaURL string, ceil *ceilingServers) pageCount {
	var pc pageCount
	if pc.kfa, pc.err = kfaPageWrites(ctx, hc, kfaURL); pc.err != nil {
		return pc
	}
	var st ceilingStats
	if pc.err = getJSON(ctx, hc, "http://"+ceil.create.addr+"/stats", &st); pc.err == nil {
		pc.ceiling, pc.creates = float64(st.PageWrites), float64(st.Creates)
	}
	return pc
}

// pagesSince is what was written from before to after, asks being the
// asks kfa took meanwhile.
func pagesSince(before, after pageCount, asks int) (Pages, error) {
	if err := cmp.Or(before.err, after.err); err != nil {
		return Pages{}, err
	}
	return Pages{
		PerAsk:    ratio(after.kfa-before.kfa, float64(asks)),
		PerCreate: ratio(after.ceiling-before.ceiling, after.creates-before.creates),
	}, nil
}

// kfaPageWrites reads kfa_bbolt_writes_total from kfa's /metrics.
func kfaPageWrites(ctx context.Context, hc *http.Client, kfaURL string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, kfaURL+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "kfa_bbolt_writes_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no kfa_bbolt_writes_total in /metrics")
}

// ceilingStats is the create ceiling's GET /stats.
type ceilingStats struct {
	PageWrites int64 `json:"pageWrites"`
	Creates    int64 `json:"creates"`
}

func getJSON(ctx context.Context, hc *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
