import { describe, expect, it } from 'vitest';
import { checkProjectInput, chooseError, initialProject, needsProject, projectSource, reduceProject } from './project';

const msg = (type: string, data: unknown) => ({ type, channel: 'project', data, timestamp: '' });

describe('project folder', () => {
  it('reduces snapshots and events to the whole project; other messages change nothing', () => {
    const s = reduceProject(initialProject, msg('snapshot', { dir: '', name: '', source: 'none' }));
    expect(needsProject(initialProject)).toBe(false); // unknown yet: no prompt
    expect(needsProject(s)).toBe(true);
    const t = reduceProject(s, msg('event', { dir: '/srv/app', name: 'app', source: 'chosen' }));
    expect(t.project).toEqual({ dir: '/srv/app', name: 'app', source: 'chosen' });
    expect(needsProject(t)).toBe(false);
    expect(reduceProject(t, msg('subscribed', {}))).toBe(t);
    expect(reduceProject(initialProject, msg('snapshot', null)).project).toEqual({ dir: '', name: '', source: 'none' });
  });

  it('checks a typed folder before asking the hub', () => {
    expect(checkProjectInput('  ')).toContain('Type the folder');
    expect(checkProjectInput('src/app')).toContain('is relative');
    expect(checkProjectInput('~')).toContain('Not your whole home directory');
    expect(checkProjectInput('/')).toContain('Not /');
    expect(checkProjectInput(' ~/src/app ')).toBe('');
    expect(checkProjectInput('/srv/app')).toBe('');
  });

  it('names sources and strips the action prefix of refusals', () => {
    expect(projectSource('last')).toBe('chosen last time');
    expect(projectSource('odd')).toBe('odd');
    expect(chooseError(new Error('choose the project folder: HTTP 400: project folder: / is the whole computer'))).toBe('project folder: / is the whole computer');
    expect(chooseError(new Error('choose the project folder: project folder: x'))).toBe('project folder: x');
  });
});
