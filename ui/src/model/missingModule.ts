/**
 * `ModuleNotFoundError: No module named 'sklearn'` → the package that provides it
 * (`scikit-learn`), for the "Install scikit-learn" offer under the error. The module name is
 * kernel output (untrusted): only plain dotted Python names are offered, never anything that
 * pip would read as an option, a URL or a path.
 */

/** Import names whose PyPI package has another name. */
const PACKAGES: Record<string, string> = {
  sklearn: 'scikit-learn',
  cv2: 'opencv-python',
  PIL: 'pillow',
  yaml: 'pyyaml',
  bs4: 'beautifulsoup4',
  dateutil: 'python-dateutil',
  skimage: 'scikit-image',
  Crypto: 'pycryptodome',
  dotenv: 'python-dotenv',
  docx: 'python-docx',
  pptx: 'python-pptx',
  serial: 'pyserial',
  attr: 'attrs',
};

/** The package to offer for a `ModuleNotFoundError`'s value, or null. */
export function packageForMissingModule(ename: string, evalue: string): string | null {
  if (ename !== 'ModuleNotFoundError') return null;
  const m = /^No module named '([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_.]*)?'$/.exec(evalue.trim());
  const top = m?.[1];
  if (!top) return null;
  return PACKAGES[top] ?? top.replace(/_/g, '-');
}
