package tasks

import "testing"

func TestSplitLyrics(t *testing.T) {
	for _, tc := range []struct{ answer, prompt, title, text string }{
		{"First Snow\n\n[Verse]\nWhite on the window", "snow", "First Snow", "[Verse]\nWhite on the window"},
		{"Title: \"First Snow\"\n[Verse]\nla", "snow", "First Snow", "[Verse]\nla"},
		{"## First Snow\n\nla la", "snow", "First Snow", "la la"},
		{"[Verse]\nla la\nlo lo", "a song about snow", "a song about snow", "[Verse]\nla la\nlo lo"},
		{"only one line", "a song about the first snow of a very long winter in the northern mountains", "a song about the first snow of a very long winter in the", "only one line"},
	} {
		title, text := splitLyrics(tc.answer, tc.prompt)
		if title != tc.title || text != tc.text {
			t.Errorf("splitLyrics(%q) = %q, %q; want %q, %q", tc.answer, title, text, tc.title, tc.text)
		}
	}
}
