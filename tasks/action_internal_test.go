package tasks

import (
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

func TestMatches(t *testing.T) {
	for a, want := range map[parleyv1.TaskAction]bool{
		parleyv1.TaskAction_TASK_ACTION_MUSIC: true, parleyv1.TaskAction_TASK_ACTION_UPLOAD: true,
		parleyv1.TaskAction_TASK_ACTION_CONCAT: true, parleyv1.TaskAction_TASK_ACTION_LYRICS: false,
	} {
		if got := matches(a, parleyv1.TaskAction_TASK_ACTION_MUSIC); got != want {
			t.Errorf("matches(%v, MUSIC) = %v", a, got)
		}
		if !matches(a, parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED) {
			t.Errorf("matches(%v, UNSPECIFIED) = false", a)
		}
	}
}
