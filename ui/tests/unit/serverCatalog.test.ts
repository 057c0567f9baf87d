import { describe, expect, it } from 'vitest';
import { nameFromPackage } from '../../src/ui/serverCatalog';

describe('a server name from a package name', () => {
  it('is what kernel code can import', () => {
    expect(nameFromPackage('mcp-server-time')).toBe('time');
    expect(nameFromPackage('@modelcontextprotocol/server-memory')).toBe('memory');
    expect(nameFromPackage('weather.tools')).toBe('weather_tools');
    expect(nameFromPackage('9lives')).toBe('_9lives');
    expect(nameFromPackage('mcp-server-')).toBe('server');
  });
});
