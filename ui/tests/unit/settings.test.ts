import { describe, expect, it } from 'vitest';
import { asAppSettings, DEFAULT_APPROVAL_TIMEOUT_SECS, describeTimeout, MAX_APPROVAL_TIMEOUT_SECS, parseTimeoutInput, timeoutStatus } from '../../src/model/settings';

describe('the approval timeout field', () => {
  it('takes seconds, with or without a unit, and minutes or hours that come to whole seconds', () => {
    expect(parseTimeoutInput('60')).toEqual({ ok: true, secs: 60 });
    expect(parseTimeoutInput(' 90 s ')).toEqual({ ok: true, secs: 90 });
    expect(parseTimeoutInput('90sec')).toEqual({ ok: true, secs: 90 });
    expect(parseTimeoutInput('2 min')).toEqual({ ok: true, secs: 120 });
    expect(parseTimeoutInput('1.5 min')).toEqual({ ok: true, secs: 90 });
    expect(parseTimeoutInput('1 h')).toEqual({ ok: true, secs: 3600 });
    expect(parseTimeoutInput('24 hours')).toEqual({ ok: true, secs: MAX_APPROVAL_TIMEOUT_SECS });
    expect(parseTimeoutInput('1')).toEqual({ ok: true, secs: 1 });
  });

  it('refuses "never" and 0, since the engine always rejects an undecided call in the end', () => {
    for (const text of ['never', 'Never', 'off', '0', '0 s', '0.0']) {
      const r = parseTimeoutInput(text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.message).toMatch(/always rejected in the end/);
    }
  });

  it('refuses what is not a whole number of seconds within a day, saying what it wants', () => {
    const message = (text: string): string => {
      const r = parseTimeoutInput(text);
      if (r.ok) throw new Error(`${text} was accepted`);
      return r.message;
    };
    expect(message('')).toMatch(/in seconds, from 1 second to 86,400 seconds/);
    expect(message('abc')).toBe('“abc” is not a duration. Give a number of seconds, e.g. 60 or 2 min.');
    expect(message('10 fortnights')).toMatch(/is not a duration/);
    expect(message('-5')).toMatch(/is not a duration/);
    expect(message('1.5')).toBe('Give a whole number of seconds.');
    expect(message('86401')).toMatch(/must be from 1 second to 86,400 seconds \(a day\)/);
    expect(message('25 h')).toMatch(/must be from 1 second/);
  });

  it('says a timeout in the words the panel and the dialog use', () => {
    expect(describeTimeout(DEFAULT_APPROVAL_TIMEOUT_SECS)).toBe('60 s');
    expect(describeTimeout(90)).toBe('90 s');
    expect(describeTimeout(120)).toBe('2 min');
    expect(describeTimeout(150)).toBe('2 min 30 s');
    expect(describeTimeout(3600)).toBe('1 h');
    expect(describeTimeout(5400)).toBe('1 h 30 min');
    expect(describeTimeout(86_400)).toBe('24 h');
  });

  it('says the timeout is in force at once, and that calls already waiting keep theirs', () => {
    expect(timeoutStatus({ approvalTimeoutSecs: 60 }, false)).toBe('In force: the next tool call waits up to 60 s.');
    expect(timeoutStatus({ approvalTimeoutSecs: 120 }, true)).toBe('Saved: 2 min, in force now. The next tool call waits up to 2 min; calls already waiting keep their time.');
  });

  it('checks the backend’s settings', () => {
    expect(asAppSettings({ approvalTimeoutSecs: 90 })).toEqual({ approvalTimeoutSecs: 90 });
    expect(asAppSettings({ approvalTimeoutSecs: 90, theme: 'dark' }), 'fields of a later backend are dropped').toEqual({ approvalTimeoutSecs: 90 });
    expect(asAppSettings({ approvalTimeoutSecs: 0 })).toBeNull();
    expect(asAppSettings({ approvalTimeoutSecs: '60' })).toBeNull();
    expect(asAppSettings({})).toBeNull();
    expect(asAppSettings(null)).toBeNull();
  });
});
