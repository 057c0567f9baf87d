import { describe, expect, it } from 'vitest';
import { analyzeCell, buildCodeAction, checkChoices, LAST_EXPRESSION, parseLiteral } from '../../src/model/codeAction';

const CELL = [
  'from mcptools.fx.echo import Params, run',
  'text = "hello"  # what to echo',
  'times = 2',
  'scale = 1.5',
  'loud = True',
  'tags = ["a", "b"]',
  'data = load(',
  '    "x.csv",',
  ')',
  'reply = run(Params(text=text * times))',
  'reply',
].join('\n');

describe('Save cell as tool: reading a cell', () => {
  it('offers top-level one-line assignments, with literal defaults and guessed types', () => {
    const a = analyzeCell(CELL);
    expect(a.candidates.map((c) => [c.name, c.type, c.value])).toEqual([
      ['text', 'str', 'hello'],
      ['times', 'int', 2],
      ['scale', 'float', 1.5],
      ['loud', 'bool', true],
      ['tags', 'list[str]', ['a', 'b']],
      ['data', 'object', undefined],
      ['reply', 'object', undefined],
    ]);
    expect(a.lastExpression).toBe('reply');
  });

  it('knows a last line that is a statement is no value', () => {
    expect(analyzeCell('x = 1\nprint(x)').lastExpression).toBe('print(x)');
    expect(analyzeCell('x = 1\ny = x + 1').lastExpression).toBeNull();
    expect(analyzeCell('for i in range(3):\n    i').lastExpression).toBeNull();
    expect(analyzeCell('import os').lastExpression).toBeNull();
    expect(analyzeCell('s = """\nx = 1\n"""').candidates.map((c) => c.name)).toEqual(['s']);
  });

  it('parses plain literals only', () => {
    expect(parseLiteral("'it\\'s'")).toEqual({ value: "it's", type: 'str' });
    expect(parseLiteral('-3')).toEqual({ value: -3, type: 'int' });
    expect(parseLiteral('None')).toEqual({ value: null, type: 'object' });
    expect(parseLiteral('f"x{y}"')).toBeNull();
    expect(parseLiteral('[1, "a"]')).toEqual({ value: [1, 'a'], type: 'list' });
    expect(parseLiteral('compute()')).toBeNull();
  });
});

describe('Save cell as tool: the code action', () => {
  it('drops the parameters’ assignments, returns the chosen value, puts defaults last', () => {
    const a = analyzeCell(CELL);
    const action = buildCodeAction(CELL, a, { name: 'shout', category: 'demo', description: 'Echo text.', parameters: ['data', 'text', 'times'], types: { times: 'int' }, result: LAST_EXPRESSION });
    expect(action.parameters).toEqual([
      { name: 'data', type: 'object' },
      { name: 'text', type: 'str', default: 'hello' },
      { name: 'times', type: 'int', default: 2 },
    ]);
    expect(action.code.split('\n')).not.toContain('text = "hello"  # what to echo');
    expect(action.code.split('\n')).not.toContain('times = 2');
    expect(action.code.endsWith('\nreturn reply')).toBe(true);
    const byName = buildCodeAction(CELL, a, { name: 'shout', category: 'demo', description: 'Echo text.', parameters: [], result: 'reply' });
    expect(byName.code.endsWith('reply\nreturn reply')).toBe(true);
  });

  it('says what is missing, one message each', () => {
    const a = analyzeCell(CELL);
    expect(checkChoices(a, { name: '', category: 'demo', description: 'x', parameters: [], result: 'reply' })).toHaveLength(1);
    expect(checkChoices(a, { name: 'ok', category: '../x', description: '', parameters: [], result: null })).toHaveLength(3);
    expect(checkChoices(a, { name: 'class', category: 'demo', description: 'x', parameters: ['text'], types: { text: 'str; import os' }, result: 'nope' })).toHaveLength(3);
    expect(checkChoices(a, { name: 'ok', category: 'demo', description: 'x', parameters: ['text'], result: 'reply' })).toEqual([]);
  });

  describe('a parameter whose assignment spans several lines loses all of it', () => {
    const save = (cell: string, parameters: string[]) => buildCodeAction(cell, analyzeCell(cell), { name: 'tool', category: 'demo', description: 'x', parameters, result: 'out' });

    it('in parentheses', () => {
      const cell = 'data = load(\n    "x.csv",\n)\nout = len(data)';
      expect(analyzeCell(cell).candidates.map((c) => [c.name, c.line, c.end])).toEqual([['data', 0, 2], ['out', 3, 3]]);
      expect(save(cell, ['data']).code).toBe('out = len(data)\nreturn out');
    });

    it('in brackets, with its value as the default', () => {
      const cell = 'names = [\n    "ada",  # first\n    "bob"\n]\nout = ", ".join(names)';
      const action = save(cell, ['names']);
      expect(action.code).toBe('out = ", ".join(names)\nreturn out');
      expect(action.parameters).toEqual([{ name: 'names', type: 'list[str]', default: ['ada', 'bob'] }]);
    });

    it('carried on by backslashes', () => {
      const cell = 'total = 1 + \\\n    2 + \\\n    3\nout = total * 2';
      expect(analyzeCell(cell).candidates.map((c) => [c.name, c.end])).toEqual([['total', 2], ['out', 3]]);
      expect(save(cell, ['total']).code).toBe('out = total * 2\nreturn out');
      // The continued line is no statement of its own, even unindented.
      expect(analyzeCell('x = 1 + \\\ny = 2').candidates.map((c) => c.name)).toEqual(['x']);
    });

    it('in a triple-quoted string, whatever the string holds', () => {
      const cell = 'query = """\nselect (\nx = 1\n"""\nout = query.strip()';
      const a = analyzeCell(cell);
      expect(a.candidates.map((c) => [c.name, c.end])).toEqual([['query', 3], ['out', 4]]);
      expect(save(cell, ['query']).code).toBe('out = query.strip()\nreturn out');
      const escaped = "query = '''a\\'''\nb'''\nout = query";
      expect(save(escaped, ['query']).code).toBe('out = query\nreturn out');
    });

    it('while a one-line assignment still loses just its line', () => {
      const cell = 'n = 3\nitems = [\n    1,\n]\nout = items * n';
      const action = save(cell, ['n']);
      expect(action.code).toBe('items = [\n    1,\n]\nout = items * n\nreturn out');
      expect(action.parameters).toEqual([{ name: 'n', type: 'int', default: 3 }]);
    });

    it('and a statement sharing its line with another is not offered', () => {
      const a = analyzeCell('x = 1; y = 2\nout = x + y');
      expect(a.candidates.map((c) => c.name)).toEqual(['out']);
      expect(a.assigned).toEqual(['x', 'out']);
    });
  });
});
