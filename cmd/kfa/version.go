package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamped at build time by the Makefile:
// -ldflags "-X main.version=... -X main.commit=... -X main.buildDate=...".
// A plain `go build` or `go install` leaves them empty, and buildInfo
// reads what the Go toolchain recorded instead.
var (
	commit    string
	buildDate string
)

// VersionInfo is what kfa version prints.
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Modified  bool   `json:"modified,omitempty"` // built from a tree with uncommitted changes
	GoVersion string `json:"goVersion"`
	BuildDate string `json:"buildDate"`
	Platform  string `json:"platform"`
}

// buildInfo combines the -ldflags stamps with what the toolchain
// recorded in the binary (module version, VCS revision and time).
func buildInfo() VersionInfo {
	v := VersionInfo{Version: version, Commit: commit, BuildDate: buildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fillUnknown(v)
	}
	if (v.Version == "" || v.Version == "dev") && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if v.Commit == "" {
				v.Commit = s.Value
			}
		case "vcs.time":
			if v.BuildDate == "" {
				v.BuildDate = s.Value + " (commit time)"
			}
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return fillUnknown(v)
}

func fillUnknown(v VersionInfo) VersionInfo {
	for _, f := range []*string{&v.Version, &v.Commit, &v.BuildDate} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return v
}

func runVersion(_ context.Context, e env, args []string) error {
	var asJSON bool
	fs := newFlagSet("version", "kfa version [--json]",
		"Print the version of this kfa binary, the commit it was built from, the Go version and\n"+
			"the build date. 'kfa --version' and 'kfa -v' print the same.", e,
		"kfa version",
		"kfa version --json | jq -r .commit")
	fs.BoolVar(&asJSON, "json", false, "print machine-readable JSON")
	pos, err := parseArgs(fs, args, e)
	if err != nil {
		return err
	}
	if err := wantArgs(pos, 0, ""); err != nil {
		return err
	}
	v := buildInfo()
	if asJSON {
		return printJSON(e.stdout, v)
	}
	c := v.Commit
	if v.Modified {
		c += " (with uncommitted changes)"
	}
	fmt.Fprintf(e.stdout, "kfa %s\ncommit  %s\ngo      %s %s\nbuilt   %s\n", v.Version, c, v.GoVersion, v.Platform, v.BuildDate)
	return nil
}
