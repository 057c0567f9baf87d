import { describe, expect, it } from 'vitest';
import { formatBytes, formatShape } from '../../src/ui/variablesView';

describe('the Variables tab’s figures', () => {
  it('sizes in the unit a person reads at a glance', () => {
    expect(formatBytes(28)).toBe('28 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(240_000_132)).toBe('229 MB');
    expect(formatBytes(5 * 1024 ** 4)).toBe('5.0 TB');
  });

  it('a shape, or a length named after what it counts', () => {
    expect(formatShape({ name: 'df', type: 'DataFrame', shape: [10_000_000, 3] })).toBe('10,000,000 × 3');
    expect(formatShape({ name: 's', type: 'str', length: 5 })).toBe('5 chars');
    expect(formatShape({ name: 'b', type: 'bytes', length: 2 })).toBe('2 bytes');
    expect(formatShape({ name: 'l', type: 'list', length: 1 })).toBe('1 item');
    expect(formatShape({ name: 'x', type: 'int' })).toBe('');
  });
});
