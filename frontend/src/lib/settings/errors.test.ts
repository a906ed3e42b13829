import { describe, expect, it } from 'vitest';
import { errorsAt, fieldErrors, messageOf, saveErrors, unplaced } from './errors';

describe('errors from a save', () => {
  it('places each line of the hub error next to the field it names', () => {
    const msg =
      'save policy: HTTP 400: policy.rules[2].tool: pattern "exec[" has an unclosed [\npolicy.rules[3].action: "block" is not an action; use "allow", "ask" or "deny"\nroots.allow[1]: "src" is relative';
    const errs = saveErrors(msg);
    expect(errs.fields.map((e) => e.field)).toEqual(['policy.rules[2].tool', 'policy.rules[3].action', 'roots.allow[1]']);
    expect(errorsAt(errs, 'policy.rules[2]')).toEqual(['policy.rules[2].tool: pattern "exec[" has an unclosed [']);
    expect(errorsAt(errs, 'policy.rules[3].action')[0]).toContain('"block" is not an action');
    expect(errorsAt(errs, 'roots.allow')).toEqual(['roots.allow[1]: "src" is relative']);
    expect(errorsAt(errs, 'policy.rules[1]')).toEqual([]);
    expect(unplaced(errs, ['policy.rules[2]', 'policy.rules[3]'])).toEqual(['roots.allow[1]: "src" is relative']);
  });

  it('keeps what names no field (and the Wails form of the prefix) as a general error', () => {
    const errs = saveErrors('save transports: tcp.addr: listen tcp 127.0.0.1:1: bind: address already in use; nothing saved');
    expect(errs.fields).toEqual([{ field: 'tcp.addr', text: 'tcp.addr: listen tcp 127.0.0.1:1: bind: address already in use; nothing saved' }]);
    const other = saveErrors('save workspace: HTTP 400: config /c/config.toml: does not parse: line 3: bad\nsettings: this hub has no config file');
    expect(other.fields).toEqual([]);
    expect(other.general).toEqual(['config /c/config.toml: does not parse: line 3: bad', 'settings: this hub has no config file']);
    expect(saveErrors('test a call: HTTP 400: args: not a JSON object').fields[0].field).toBe('args');
  });

  it('shows nothing without errors; a check made here is one field error', () => {
    expect(errorsAt(undefined, 'web.allow')).toEqual([]);
    expect(unplaced(null, [])).toEqual([]);
    const errs = fieldErrors({ field: 'rag.api_key', text: 'rag.api_key: paste the key' });
    expect(errorsAt(errs, 'rag.api_key')).toEqual(['rag.api_key: paste the key']);
    expect(unplaced(errs, [])).toEqual(['rag.api_key: paste the key']);
    expect(messageOf(new Error('boom'))).toBe('boom');
    expect(messageOf('plain')).toBe('plain');
  });
});
