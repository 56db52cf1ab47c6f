package main

import "github.com/kfa-project/kfa/agents"

// agentLabels tells apart the agents one listing shows. Names are not
// unique (kfa agent create --allow-duplicate-name, or agents made before
// kfa refused duplicates): a name that two agents of the listing share is
// shown with the end of each one's id, "alice (…R7P9N)".
type agentLabels map[string]map[string]bool // agents.NameKey -> ids

// labels indexes the (name, id) pairs a listing shows.
func labels(pairs [][2]string) agentLabels {
	l := agentLabels{}
	for _, p := range pairs {
		k := agents.NameKey(p[0])
		if l[k] == nil {
			l[k] = map[string]bool{}
		}
		l[k][p[1]] = true
	}
	return l
}

// idSuffix is how much of an id tells two agents of one listing apart.
const idSuffix = 6

// of is the label of agent id named name: the name, with the end of the
// id when another agent of the listing has the name too; the id for an
// agent without a name.
func (l agentLabels) of(name, id string) string {
	if name == "" {
		return id
	}
	if len(l[agents.NameKey(name)]) < 2 || len(id) <= idSuffix {
		return name
	}
	return name + " (…" + id[len(id)-idSuffix:] + ")"
}
