package app

import "github.com/switchboard-hub/switchboard/internal/tasks"

// taskIDArgs are a task control's audited arguments.
type taskIDArgs struct {
	ID string `json:"id"`
}

// CancelTask stops a task's call for the user, whoever started it (the dashboard's Tasks list;
// an exec's process group is killed with it), and returns the task as it then stands.
func (c *Controller) CancelTask(id string) (tasks.Task, error) {
	end := c.begin("task_cancel", taskIDArgs{ID: id})
	err := c.st.Service.CancelTask(id)
	end(err)
	if err != nil {
		return tasks.Task{}, err
	}
	for _, t := range c.st.Service.Tasks() {
		if t.ID == id {
			return t, nil
		}
	}
	return tasks.Task{ID: id, Status: tasks.Cancelled}, nil
}
