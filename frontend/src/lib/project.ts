// The project folder (app/project.go): where clients without folders of their own work. The
// header shows it and opens the chooser; a hub started from the home directory with none chosen
// yet shows the first-run prompt "Choose a project folder". Pure functions over the "project"
// hub channel's data and the chooser's input, tested without a DOM.

import { payload, type HubMessage, type Project } from './types';

/** The "project" channel's state: null until the first snapshot. */
export interface ProjectState {
  project: Project | null;
}

export const initialProject: ProjectState = { project: null };

/** reduceProject: a snapshot and every event carry the whole Project. */
export function reduceProject(state: ProjectState, msg: HubMessage): ProjectState {
  if (msg.type !== 'snapshot' && msg.type !== 'event') return state;
  const p = payload<Project>(msg);
  return {
    project: {
      dir: typeof p.dir === 'string' ? p.dir : '',
      name: typeof p.name === 'string' ? p.name : '',
      source: p.source ?? 'none',
    },
  };
}

/** needsProject: the first-run prompt shows once the hub said it has no project folder. */
export function needsProject(s: ProjectState): boolean {
  return s.project !== null && s.project.dir === '';
}

/** What the header and Settings say about where the folder came from. */
export const projectSources: Record<string, string> = {
  flag: 'from --workspace',
  env: 'from SWITCHBOARD_WORKSPACE',
  config: 'from the config file',
  cwd: 'the folder Switchboard started in',
  last: 'chosen last time',
  chosen: 'chosen here',
  none: 'none chosen yet',
};

export function projectSource(source: string | undefined): string {
  return (source && projectSources[source]) || source || '';
}

/**
 * checkProjectInput says what is wrong with a typed folder before the hub is asked ('' when it
 * looks fine): it must be absolute or start with ~/. The hub checks the rest (that it exists, is
 * a directory, and is neither the home directory itself nor /) and its error is shown as it is.
 */
export function checkProjectInput(input: string): string {
  const dir = input.trim();
  if (!dir) return 'Type the folder of a project, such as ~/src/my-app.';
  if (dir === '~' || dir === '~/') return 'Not your whole home directory: choose the folder of one project inside it.';
  if (dir === '/') return 'Not / (the whole computer): choose the folder of one project.';
  if (!dir.startsWith('/') && !dir.startsWith('~/')) return `"${dir}" is relative: write the whole path, such as /home/me/src/my-app or ~/src/my-app.`;
  return '';
}

/** chooseError is a refusal as the chooser shows it: the hub's sentence without the action prefix. */
export function chooseError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^choose the project folder: (HTTP \d+: )?/, '');
}
