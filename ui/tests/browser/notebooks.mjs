// Notebooks for the browser tests, made in place.

/** An .ipynb (as text) of code cells with these sources. */
export function notebook(...sources) {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {},
    cells: sources.map((source, i) => ({ cell_type: 'code', id: `c${i}`, metadata: {}, source, outputs: [], execution_count: null })),
  });
}
