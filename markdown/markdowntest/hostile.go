// Package markdowntest holds the worst bodies known for the Markdown
// renderer: the tests feed them to check each bound, and kfa-bench times
// them.
package markdowntest

import "strings"

// MaxBody is the longest question or reply body, in characters: the
// bodies below are all this long or shorter.
const MaxBody = 20_000

// Body is one hostile body and what it attacks.
type Body struct {
	Name string
	Text string
}

// fill repeats unit to MaxBody characters at most.
func fill(unit string) string { return strings.Repeat(unit, MaxBody/len(unit)) }

// lines is n lines made by line(i).
func lines(n int, line func(i int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// Hostile are bodies each made to cost the most of one parser step.
func Hostile() []Body {
	return []Body{
		{"nested quotes (the review's)", fill(">\t")},
		{"nested quotes, spaces", fill("> ")},
		{"quotes of lists", fill("> - ")},
		{"nested ordered lists", fill("1. ")},
		{"nested lists", fill("- ")},
		{"indented lists", lines(140, func(i int) string { return strings.Repeat("  ", i) + "- x" })},
		{"quotes, one level a line", lines(199, func(i int) string { return strings.Repeat(">", i) + " x" })},
		{"unclosed links", fill("[a](")},
		{"unclosed angle links", fill("[a](<b")},
		{"nested brackets", strings.Repeat("[", MaxBody/2) + strings.Repeat("]", MaxBody/2)},
		{"open brackets", fill("[")},
		{"open images", fill("![")},
		{"reference links", fill("[a][b]")},
		{"emphasis", fill("*_")},
		{"open emphasis", fill("*a ")},
		{"code spans", lines(190, func(i int) string { return strings.Repeat("`", i+1) + " x" })},
		{"raw html", fill("<a ")},
		{"entities", fill("&#")},
		{"bare links", fill("http://a")},
		{"www links", fill("www.a")},
		{"wide table", "|" + strings.Repeat("a|", 2500) + "\n|" + strings.Repeat("-|", 2500) + "\n" + fill("a\n")[:MaxBody-10010]},
		{"escaped pipes in tables", "|a|b|\n|-|-|\n" + fill("|`\\|`|`\\|`|\n")[:MaxBody-12]},
		{"many tables", fill("|a|\n|-|\n\n")},
		{"many fenced blocks", fill("```go\nx\n```\n")},
		{"go code", fence("go", "{{")},
		{"yaml code", fence("yaml", "[[")},
		{"go strings", fence("go", "\"\\")},
		{"python code", fence("python", "@")},
		{"sql code", fence("sql", ":")},
	}
}

// fence is a code block in lang of lines of unit, MaxBody long.
func fence(lang, unit string) string {
	line := strings.Repeat(unit, 80/len(unit)) + "\n"
	return "```" + lang + "\n" + strings.Repeat(line, (MaxBody-len(lang)-8)/len(line)) + "```"
}
