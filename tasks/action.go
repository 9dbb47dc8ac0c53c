package tasks

import parleyv1 "github.com/parleyhq/parley/gen/parley/v1"

// ActionOf is the action of a task input.
func ActionOf(in *parleyv1.TaskInput) parleyv1.TaskAction {
	switch in.GetKind().(type) {
	case *parleyv1.TaskInput_Song:
		return parleyv1.TaskAction_TASK_ACTION_MUSIC
	case *parleyv1.TaskInput_Lyrics:
		return parleyv1.TaskAction_TASK_ACTION_LYRICS
	case *parleyv1.TaskInput_Upload:
		return parleyv1.TaskAction_TASK_ACTION_UPLOAD
	case *parleyv1.TaskInput_Concat:
		return parleyv1.TaskAction_TASK_ACTION_CONCAT
	}
	return parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED
}

// matches reports whether a task passes an action filter (unspecified
// passes all). Upload and concatenation tasks produce songs, so a music
// filter takes them too.
func matches(a, filter parleyv1.TaskAction) bool {
	songs := func(a parleyv1.TaskAction) bool { return a != parleyv1.TaskAction_TASK_ACTION_LYRICS }
	return filter == parleyv1.TaskAction_TASK_ACTION_UNSPECIFIED || songs(a) == songs(filter)
}
