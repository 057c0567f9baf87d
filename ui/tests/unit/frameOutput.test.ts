import { describe, expect, it } from 'vitest';
import { frameOfOutput, isUserVariableName } from '../../src/model/frameOutput';
import type { ExecuteResultOutput, Output } from '../../src/model/outputs';

const result = (metadata: ExecuteResultOutput['metadata']): Output => ({
  kind: 'execute_result',
  executionCount: 3,
  data: { 'text/plain': '   a\n0  1' },
  metadata,
  fromFile: false,
  extra: {},
  raw: null,
});

describe('the variable a frame shown as a result (or displayed) came from', () => {
  it('is taken from the ipybox key of an execute_result or a display_data', () => {
    expect(frameOfOutput(result({ ipybox: { frame: 'sales' } }))).toBe('sales');
    expect(frameOfOutput(result({ ipybox: { frame: 'données_2026' } }))).toBe('données_2026');
    expect(frameOfOutput(result({}))).toBeNull();
    expect(frameOfOutput(result({ ipybox: 'sales' }))).toBeNull();
    expect(frameOfOutput(result({ ipybox: { frame: 3 } }))).toBeNull();
    const display: Output = { kind: 'display_data', data: {}, metadata: { ipybox: { frame: 'sales' } }, fromFile: false, displayId: null, extra: {}, raw: null };
    expect(frameOfOutput(display), 'display(df) names it too').toBe('sales');
    const stream: Output = { kind: 'unknown', outputType: 'stream', raw: { metadata: { ipybox: { frame: 'sales' } } } } as unknown as Output;
    expect(frameOfOutput(stream)).toBeNull();
  });

  it('is never code, an attribute, a hidden name or a name made of invisible characters (a notebook file can say anything)', () => {
    for (const bad of [
      "__import__('os').system('id')",
      'df; import os',
      'df.T',
      'df[0]',
      '_',
      '_5',
      '__builtins__',
      'import',
      'None',
      '',
      ' df',
      'df\n',
      'd\u202ef',
      'd\u200bf',
      '1df',
      'a'.repeat(257),
    ]) {
      expect(isUserVariableName(bad), JSON.stringify(bad)).toBe(false);
      expect(frameOfOutput(result({ ipybox: { frame: bad } })), JSON.stringify(bad)).toBeNull();
    }
  });
});
